/**
 * A small reader of manual pages written in troff with the man or mdoc macros: what a reader of
 * the formatted page would read, as plain text, by section. It is not a typesetter: fonts, sizes,
 * spacing and conditionals are dropped, tables keep their cells' words, and macro definitions,
 * ignored blocks and conditional requests (mostly a page's preamble) are skipped. Enough to turn
 * /usr/share/man into English text for the search benchmark's real-text corpus (manpages.ts).
 */

export interface ManSection {
  /** The section's heading as printed ("DESCRIPTION", "SEE ALSO"); '' for text before the first. */
  heading: string;
  /** Paragraphs of text, white space collapsed. */
  paragraphs: string[];
}

export interface ManPage {
  /** From .TH or .Dt, lower-cased as the file is named ("ls"); '' when the page has neither. */
  name: string;
  /** The manual section ("1", "3ssl"); '' when unknown. */
  section: string;
  /** The NAME section's one-line description after the dash ("list directory contents"); '' if none. */
  description: string;
  sections: ManSection[];
}

/** Named characters (\(xx and \[name]) worth keeping as text; the rest read as nothing. */
const CHARS: Record<string, string> = {
  em: '—', en: '–', hy: '-', mi: '-', aq: "'", dq: '"', lq: '"', rq: '"', oq: "'", cq: "'", bu: '•',
  co: '©', rg: '®', tm: '™', ti: '~', ha: '^', ga: '`', aa: '´', sl: '/', rs: '\\', bv: '|', ba: '|',
  '>=': '≥', '<=': '≤', '!=': '≠', '==': '≡', '->': '→', '<-': '←', pl: '+', mu: '×', di: '÷', de: '°',
  fm: '′', sd: '″', lB: '[', rB: ']', lC: '{', rC: '}', la: '⟨', ra: '⟩', at: '@', sh: '#', Do: '$',
  dg: '†', ss: 'ß', 'e\'': 'é', 'a"': 'ä', 'o"': 'ö', 'u"': 'ü', ',c': 'ç', 'n~': 'ñ', '12': '½', sc: '§',
};
/** Strings (\*x, \*(xx, \*[name]) the common macro packages define. */
const STRINGS: Record<string, string> = { lq: '"', rq: '"', R: '®', Tm: '™', S: '', '-': '—', Aq: "'" };

/** Escapes that take a delimited argument and print nothing of it (\h'1n', \w'text', ...). */
const DELIMITED = new Set(['h', 'v', 'w', 'o', 'l', 'L', 'D', 'X', 'Z', 'b', 'x', 'A', 'B', 'C', 'N', 'R', 'S', 'V', 'Y']);

const has = (table: Record<string, string>, key: string) => Object.hasOwn(table, key);

/** A name after \( (two characters), \[ (to the bracket) or one character; returns [name, next index]. */
function escapeName(s: string, i: number): [string, number] {
  if (s[i] === '(') return [s.slice(i + 1, i + 3), i + 3];
  if (s[i] === '[') {
    const end = s.indexOf(']', i);
    return end < 0 ? [s.slice(i + 1), s.length] : [s.slice(i + 1, end), end + 1];
  }
  return [s[i] ?? '', i + 1];
}

/** Text with troff's escapes interpreted: characters kept, font, size and motion escapes dropped. */
export function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = s[i + 1];
    i += 2;
    if (e === undefined) break;
    switch (e) {
      case '"': // comment to the end of the line
      case '#':
        return out;
      case 'f': // font
      case 'F':
      case 'n': // number register
      case 'g':
      case 'k':
      case 'm': // colour
      case 'M':
      case 'O':
      case '$': // macro argument
        [, i] = escapeName(s, i);
        break;
      case 's': { // size: \s0, \s+2, \s-1, \s(12, \s[12], \s'12'
        if (s[i] === '+' || s[i] === '-') i++;
        if (s[i] === '(' || s[i] === '[') [, i] = escapeName(s, i);
        else if (s[i] === "'") i = s.indexOf("'", i + 1) < 0 ? s.length : s.indexOf("'", i + 1) + 1;
        else while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
        break;
      }
      case '(':
      case '[': {
        const [name, next] = escapeName(s, i - 1);
        i = next;
        if (name.startsWith('u') && /^u[0-9A-F]{4,6}$/.test(name)) out += String.fromCodePoint(parseInt(name.slice(1), 16));
        else if (has(CHARS, name)) out += CHARS[name];
        break;
      }
      case '*': {
        const [name, next] = escapeName(s, i);
        i = next;
        if (has(STRINGS, name)) out += STRINGS[name];
        break;
      }
      case '-':
        out += '-';
        break;
      case 'e':
      case '\\':
        out += '\\';
        break;
      case ' ':
      case '~':
      case '0':
        out += ' ';
        break;
      case 't':
        out += '\t';
        break;
      case '.':
      case "'":
      case '`':
        out += e === '`' ? '`' : e;
        break;
      case '&': // zero-width: \& \) \/ \, \: \% \| \^ \c \p \z \d \u \r \{ \}
      case ')':
      case '/':
      case ',':
      case ':':
      case '%':
      case '|':
      case '^':
      case 'c':
      case 'p':
      case 'z':
      case 'd':
      case 'u':
      case 'r':
      case '{':
      case '}':
      case '\n':
        break;
      default:
        if (DELIMITED.has(e)) {
          const delim = s[i];
          const end = delim === undefined ? -1 : s.indexOf(delim, i + 1);
          i = end < 0 ? s.length : end + 1;
        } else out += e;
    }
  }
  return out;
}

/** A request or macro line's arguments, split as troff splits them (double quotes group, "" is a quote). */
export function splitArgs(s: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    let arg = '';
    if (s[i] === '"') {
      for (i++; i < s.length; i++) {
        if (s[i] === '"') {
          if (s[i + 1] === '"') {
            arg += '"';
            i++;
          } else {
            i++;
            break;
          }
        } else arg += s[i];
      }
    } else {
      while (i < s.length && s[i] !== ' ' && s[i] !== '\t') {
        if (s[i] === '\\' && i + 1 < s.length) arg += s[i++];
        arg += s[i++];
      }
    }
    args.push(arg);
  }
  return args;
}

/** mdoc macros that can be called on another macro's line: their names are not text. */
const MDOC_CALLABLE = new Set([
  'Ac', 'Ad', 'An', 'Ao', 'Ap', 'Aq', 'Ar', 'At', 'Bc', 'Bo', 'Bq', 'Brc', 'Bro', 'Brq', 'Bsx', 'Bx', 'Cd', 'Cm', 'Dc', 'Do', 'Dq', 'Dv', 'Dx',
  'Ec', 'Em', 'En', 'Eo', 'Er', 'Es', 'Ev', 'Fa', 'Fc', 'Fl', 'Fn', 'Fo', 'Fr', 'Ft', 'Fx', 'Ic', 'Li', 'Lk', 'Ms', 'Mt', 'Nm', 'No', 'Ns',
  'Nx', 'Oc', 'Oo', 'Op', 'Ot', 'Ox', 'Pa', 'Pc', 'Pf', 'Po', 'Pq', 'Qc', 'Ql', 'Qo', 'Qq', 'Sc', 'So', 'Sq', 'St', 'Sx', 'Sy', 'Ta', 'Tn',
  'Ux', 'Va', 'Vt', 'Xc', 'Xo', 'Xr',
]);
/** Requests and macros that only lay out or define things: their lines print nothing. */
const LAYOUT = new Set([
  'br', 'sp', 'in', 'ti', 'nf', 'fi', 'ne', 'ad', 'na', 'hy', 'nh', 'ft', 'ps', 'vs', 'll', 'ta', 'ds', 'as', 'nr', 'so', 'tr', 'cc', 'ss',
  'ce', 'ul', 'cu', 'fam', 'mk', 'rt', 'pl', 'bp', 'pn', 'po', 'ev', 'rm', 'rn', 'di', 'da', 'wh', 'ch', 'it', 'em', 'lf', 'pc', 'char',
  'hw', 'hc', 'lt', 'tl', 'fc', 'lc', 'mc', 'nm', 'nn', 'ls', 'ec', 'eo', 'cs', 'bd', 'uf', 'fp', 'fspecial', 'ftr', 'kern', 'tm', 'ab',
  'ex', 'pm', 'fl', 'RS', 'RE', 'DT', 'PD', 'UC', 'AT', 'ME', 'UE', 'YS', 'EX', 'EE', 'in', 'Os', 'Dd', 'Bl', 'El', 'Bd', 'Ed', 'Ek', 'Bk',
  'Lb', 'Rs', 'Re', 'Tg', 'Ds', 'De', 'LINE', 'hlm', 'iX', 'IX', 'Vb', 'Ve', 'TA', 'TQ', 'OS', 'do', 'nop', 'blm',
  'ie', 'el', 'if', 'while', 'break', 'continue', 'return', 'shift', 'asciify', 'chop', 'substring', 'length', 'index', 'itc', 'sty',
]);
const PARAGRAPH = new Set(['PP', 'P', 'LP', 'Pp', 'Lp', 'sp', 'br', 'HP', 'IP', 'TP', 'It', 'Bl', 'El', 'Bd', 'Ed', 'TQ', 'Sh', 'Ss', 'SH', 'SS', 'EX', 'EE', 'nf', 'fi', 'RS', 'RE']);

/** The text a macro line of `name` with `args` contributes (already unescaped), or undefined for none. */
function macroText(name: string, args: string[], page: ManPage): string | undefined {
  switch (name) {
    case 'B': case 'I': case 'SM': case 'SB': case 'OP': case 'Nm': case 'It': case 'Nd': case 'IP': case 'SY':
      if (name === 'Nm' && args.length === 0) return page.name;
      if (name === 'IP') return args[0]; // the tag; the indent is not text
      if (name === 'SY' || name === 'OP') return args.join(' ');
      // mdoc's one-line description prints after a dash, as the formatted page shows it.
      if (name === 'Nd') return `— ${mdocWords(args, page)}`;
      return mdocWords(args, page);
    case 'BR': case 'RB': case 'IR': case 'RI': case 'BI': case 'IB':
      return args.join(''); // alternating fonts, no space between
    case 'UR': case 'MT':
      return args[0];
    default:
      if (MDOC_CALLABLE.has(name)) return mdocWords([name, ...args], page);
      return undefined;
  }
}

/** The words of an mdoc line: callable macro names dropped, Fl's flags with their dash, Xr's name(section). */
function mdocWords(args: string[], page: ManPage): string {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === 'Fl') {
      const next = args[i + 1];
      if (next !== undefined && !MDOC_CALLABLE.has(next)) {
        out.push(`-${next}`);
        i++;
      } else out.push('-');
    } else if (a === 'Xr' && args[i + 2] !== undefined && /^\d/.test(args[i + 2]!)) {
      out.push(`${args[i + 1]}(${args[i + 2]})`);
      i += 2;
    } else if (a === 'Nm' && (args[i + 1] === undefined || MDOC_CALLABLE.has(args[i + 1]!))) {
      out.push(page.name);
    } else if (!MDOC_CALLABLE.has(a)) out.push(a);
  }
  // Punctuation arguments (",", ".", ")") attach to the word before them.
  return out.join(' ').replace(/ ([,.;:)\]]+)(?= |$)/g, '$1').replace(/([([]) /g, '$1');
}

/** A troff or mdoc manual page's source as plain text by section (see the file comment). */
export function readManPage(source: string): ManPage {
  const page: ManPage = { name: '', section: '', description: '', sections: [] };
  let section: ManSection = { heading: '', paragraphs: [] };
  let paragraph: string[] = [];
  let headingNext = false; // .SH with no arguments: the heading is the next text line
  let tagNext = false; // .TP: the next line is the tag, a paragraph of its own
  let inTable = false;
  let tableFormat = false;
  const endParagraph = () => {
    const text = paragraph.join(' ').replace(/\s+/g, ' ').trim();
    if (text) section.paragraphs.push(text);
    paragraph = [];
  };
  const startSection = (heading: string) => {
    endParagraph();
    if (section.heading || section.paragraphs.length) page.sections.push(section);
    section = { heading: heading.replace(/\s+/g, ' ').trim(), paragraphs: [] };
  };
  const addText = (text: string) => {
    if (headingNext) {
      headingNext = false;
      startSection(text);
      return;
    }
    paragraph.push(text);
    if (tagNext) {
      tagNext = false;
      endParagraph();
    }
  };

  // Joined continuation lines (a backslash at the end of a line).
  const lines = source.replace(/\r\n?/g, '\n').replace(/\\\n/g, '').split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    if (inTable) {
      if (/^[.']\s*TE\b/.test(line)) {
        inTable = false;
        endParagraph();
      } else if (tableFormat) {
        // The options line (ending ';') and the format lines, the last of which ends with '.'.
        if (/\.\s*$/.test(line)) tableFormat = false;
      } else if (/^[.']/.test(line)) {
        if (/^[.']\s*T&/.test(line)) tableFormat = true;
      } else if (!/^\s*[_=]\s*$/.test(line)) {
        const cells = line.split('\t').map((cell) => unescape(cell.replace(/^T\{|T\}$/g, '')).trim()).filter((cell) => cell && cell !== '_' && cell !== '=');
        if (cells.length) addText(cells.join(' '));
      }
      continue;
    }
    if (line.startsWith('.') || line.startsWith("'")) {
      const body = line.slice(1).trimStart();
      if (body.startsWith('\\"') || body.startsWith('\\#') || body === '') continue;
      const match = /^(\S+)\s*(.*)$/.exec(body);
      if (!match) continue;
      const name = match[1]!;
      const rest = match[2]!;
      if (name === 'de' || name === 'de1' || name === 'am' || name === 'ig') {
        // A definition or an ignored block runs to a line of '..' (or to .ig's end marker).
        const end = name === 'ig' && rest.trim() ? `.${rest.trim()}` : '..';
        while (n + 1 < lines.length && lines[n + 1]!.trim() !== end) n++;
        n++;
        continue;
      }
      if (name === 'if' || name === 'ie' || name === 'el' || name === 'while') {
        // A conditional block: skip to its matching \} (conditions are a page's formatting logic).
        let depth = (line.match(/\\\{/g) ?? []).length - (line.match(/\\\}/g) ?? []).length;
        while (depth > 0 && n + 1 < lines.length) {
          n++;
          depth += (lines[n]!.match(/\\\{/g) ?? []).length - (lines[n]!.match(/\\\}/g) ?? []).length;
        }
        continue;
      }
      if (name === 'TS') {
        endParagraph();
        inTable = true;
        tableFormat = true;
        continue;
      }
      const args = splitArgs(rest).map(unescape);
      if (name === 'TH' || name === 'Dt') {
        page.name = (args[0] ?? '').toLowerCase();
        page.section = (args[1] ?? '').toLowerCase();
        continue;
      }
      if (name === 'SH' || name === 'SS' || name === 'Sh' || name === 'Ss') {
        if (args.length) startSection(args.join(' '));
        else headingNext = true;
        continue;
      }
      if (PARAGRAPH.has(name)) endParagraph();
      if (name === 'TP' || name === 'TQ') tagNext = true;
      if (LAYOUT.has(name) && name !== 'It') continue;
      const text = macroText(name, args, page);
      if (text !== undefined && text.trim()) addText(text);
      continue;
    }
    const text = unescape(line);
    if (text.trim() === '') {
      // A blank line breaks a paragraph, as in troff.
      if (!headingNext) endParagraph();
      continue;
    }
    addText(text);
  }
  startSection('');
  page.sections = page.sections.filter((s) => s.paragraphs.length > 0 || s.heading);
  const nameSection = page.sections.find((s) => s.heading.toUpperCase() === 'NAME');
  if (nameSection) {
    const line = nameSection.paragraphs.join(' ');
    const dash = /\s[-—–]+\s|\\-\s/.exec(line);
    if (dash) page.description = line.slice(dash.index + dash[0].length).trim();
  }
  return page;
}

/** A page whose whole text is `.so other-page` (an alias): the page it points to, or undefined. */
export function soTarget(source: string): string | undefined {
  const lines = source.split('\n').filter((l) => l.trim() && !/^[.']\s*\\"/.test(l));
  if (lines.length !== 1) return undefined;
  const m = /^[.']so\s+(\S+)/.exec(lines[0]!);
  return m ? m[1] : undefined;
}
