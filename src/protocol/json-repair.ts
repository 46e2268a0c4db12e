/**
 * Lenient JSON for tool arguments models write by hand: code fences, single quotes, Python
 * literals (True/False/None), unquoted keys, trailing commas, raw newlines in strings, and
 * unclosed strings or brackets at the end. Returns undefined when the text is not recoverable.
 * Callers mark anything that needed repair as off-form.
 */
export function repairJson(text: string): { value: unknown } | undefined {
  const s = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    return { value: JSON.parse(s) };
  } catch {
    // repair below
  }
  const out: string[] = [];
  const open: string[] = [];
  let i = 0;
  const dropTrailingComma = (): void => {
    while (out.length > 0 && /^\s*$/.test(out.at(-1)!)) out.pop();
    if (out.at(-1) === ',') out.pop();
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"' || c === "'") {
      let j = i + 1;
      let body = '';
      while (j < s.length && s[j] !== c) {
        if (s[j] === '\\' && j + 1 < s.length) {
          // An escaped single quote is not a JSON escape; others pass through.
          body += c === "'" && s[j + 1] === "'" ? "'" : s.slice(j, j + 2);
          j += 2;
          continue;
        }
        const ch = s[j]!;
        body += ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch === '\t' ? '\\t' : c === "'" && ch === '"' ? '\\"' : ch;
        j++;
      }
      out.push(`"${body}"`);
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      open.push(c === '{' ? '}' : ']');
      out.push(c);
    } else if (c === '}' || c === ']') {
      if (open.at(-1) !== c) return undefined;
      open.pop();
      dropTrailingComma();
      out.push(c);
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i))![0];
      const literal = { True: 'true', False: 'false', None: 'null', true: 'true', false: 'false', null: 'null' }[word];
      if (/^\s*:/.test(s.slice(i + word.length))) out.push(JSON.stringify(word));
      else if (literal !== undefined) out.push(literal);
      else return undefined;
      i += word.length;
      continue;
    } else {
      out.push(c);
    }
    i++;
  }
  dropTrailingComma();
  while (open.length > 0) out.push(open.pop()!);
  try {
    return { value: JSON.parse(out.join('')) };
  } catch {
    return undefined;
  }
}
