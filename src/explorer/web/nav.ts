/** Links between the explorer's pages: routes in the URL hash (#/path?query). */
export function link(path: string, params: Record<string, string | number | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export function go(path: string, params: Record<string, string | number | undefined | null>): void {
  location.hash = link(path, params).slice(1);
}
