/**
 * The title of a chunk whose source has no title column (the Harness-1 corpora: a chunk id, the
 * text, metadata columns). The rule, in order:
 *  1/2. Filing fields: company, form, filing date and item/section, joined with " · "
 *     (e.g. "Apple Inc. · 10-K · 2020-10-30 · Item 7"), taken from metadata columns and, for those
 *     missing, from a "Key: value" header in the first lines of the text (the SEC chunks begin with
 *     Company / Filing Date / Form / Item lines). Names match case-insensitively, ignoring spaces,
 *     underscores and dashes (company_name, Filing Date, form_type ...). Needs at least a company.
 *  3. Otherwise a `title`/`name`/`doc_title`/`document_title` metadata value.
 *  4. Otherwise the first non-empty line of the text, cut to 80 characters at a word boundary.
 */
const FIELDS: [string, string[]][] = [
  ['company', ['company', 'companyname', 'company_name', 'registrant', 'entity']],
  ['form', ['form', 'formtype', 'form_type', 'filingtype']],
  ['date', ['filingdate', 'filing_date', 'date', 'fileddate', 'period']],
  ['item', ['item', 'section', 'itemtitle']],
];
const TITLE_KEYS = ['title', 'name', 'doctitle', 'documenttitle'];

const squash = (key: string) => key.toLowerCase().replace(/[\s_-]+/g, '');

function pick(lookup: Map<string, string>, names: string[]): string | undefined {
  for (const n of names) {
    const v = lookup.get(squash(n));
    if (v) return v;
  }
  return undefined;
}

function valueString(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'object') return '';
  return String(v).replace(/\s+/g, ' ').trim();
}

function fromFields(lookup: Map<string, string>): string | undefined {
  const company = pick(lookup, FIELDS[0]![1]);
  if (!company) return undefined;
  const parts = [company];
  for (const [, names] of FIELDS.slice(1)) {
    const v = pick(lookup, names);
    if (v) parts.push(/^\d+[a-z]?$/i.test(v) && names === FIELDS[3]![1] ? `Item ${v}` : v);
  }
  return parts.join(' · ');
}

export function deriveTitle(text: string, meta: Record<string, unknown> | undefined): string {
  const metaLookup = new Map<string, string>();
  for (const [k, v] of Object.entries(meta ?? {})) metaLookup.set(squash(k), valueString(v));
  // Header fields fill what the metadata columns lack; a column wins over the header.
  const fields = new Map<string, string>();
  for (const line of text.split('\n', 8)) {
    const m = /^\s*([A-Za-z][A-Za-z _-]{0,30}?)\s*:\s*(.+?)\s*$/.exec(line);
    if (m) fields.set(squash(m[1]!), m[2]!);
  }
  for (const [k, v] of metaLookup) if (v) fields.set(k, v);
  const filing = fromFields(fields);
  if (filing) return filing;

  const named = pick(metaLookup, TITLE_KEYS);
  if (named) return named;

  const first = text.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? '';
  if (first.length <= 80) return first;
  const cut = first.slice(0, 80);
  const space = cut.lastIndexOf(' ');
  return (space > 40 ? cut.slice(0, space) : cut) + '…';
}
