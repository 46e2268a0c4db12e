import type { JsonSchema } from '../../env/types.js';
import { encodePieces, sp, type Piece } from './tokens.js';

/**
 * Harmony rendering (docs/reference/FORMATS.md §1.2–1.7), checked byte for byte against the shared vectors from
 * openai/harmony's test data. Everything here is pure: messages in, pieces/tokens out.
 */

export type ReasoningEffort = 'low' | 'medium' | 'high';

export const CHANNELS = ['analysis', 'commentary', 'final'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface HarmonySystemOptions {
  /** Default: the identity gpt-oss was trained with. */
  modelIdentity?: string;
  /** Default 2024-06. */
  knowledgeCutoff?: string;
  /** Omitted when absent (the harmony library's behaviour): pin it so prompts are reproducible. */
  currentDate?: string;
  /** Default medium. */
  reasoningEffort?: ReasoningEffort;
  /**
   * The channels the system message lists, and whether every message must name one (the
   * library's `with_required_channels` / `with_channel_config`). Default: all three, required.
   * An empty list leaves the line out.
   */
  channels?: { valid: readonly string[]; required: boolean };
  /** gpt-oss's built-in tool namespaces, declared in the system message (`with_browser_tool`, `with_python_tool`). */
  builtinTools?: readonly BuiltinNamespace[];
}

export type BuiltinNamespace = 'browser' | 'python';

/** A tool namespace as the system or developer message declares it (the library's ToolNamespaceConfig). */
export interface ToolNamespace {
  name: string;
  description?: string;
  tools: readonly HarmonyTool[];
}

export const DEFAULT_MODEL_IDENTITY = 'You are ChatGPT, a large language model trained by OpenAI.';

export interface HarmonyTool {
  name: string;
  description: string;
  /** Absent, or an object schema without properties, renders `() => any`. */
  parameters?: JsonSchema;
}

export type Terminator = 'end' | 'return' | 'call';

export interface HarmonyMessage {
  /** system, developer, user, assistant, or a tool's name (functions.bm25_search). */
  author: string;
  recipient?: string;
  /** Where ` to=…` goes in the header: after the author (harmony library, tool results) or after the channel (Harmony docs, sleuth's calls). */
  recipientIn?: 'role' | 'channel';
  channel?: string;
  /** `<|constrain|>json` (written with the special token) or a bare type such as `json`. */
  contentType?: string;
  content: string;
  /** Default: `call` for an assistant message with a recipient, else `end`. */
  terminator?: Terminator;
}

/** The system message: identity and dates, reasoning effort, built-in tools, then the channel rule (the library's order). */
export function renderSystemContent(options: HarmonySystemOptions, hasFunctionTools: boolean): string {
  const top = [options.modelIdentity ?? DEFAULT_MODEL_IDENTITY, `Knowledge cutoff: ${options.knowledgeCutoff ?? '2024-06'}`];
  if (options.currentDate !== undefined) top.push(`Current date: ${options.currentDate}`);
  const sections = [top.join('\n'), `Reasoning: ${options.reasoningEffort ?? 'medium'}`];
  // Namespaces in name order, as the library's BTreeMap keeps them.
  const builtin = [...new Set(options.builtinTools ?? [])].sort().map((n) => BUILTIN_NAMESPACES[n]);
  if (builtin.length) sections.push(renderNamespaces(builtin));
  const { valid, required } = options.channels ?? { valid: CHANNELS, required: true };
  if (valid.length) {
    let channels = `# Valid channels: ${valid.join(', ')}.${required ? ' Channel must be included for every message.' : ''}`;
    if (hasFunctionTools) channels += "\nCalls to these tools must go to the commentary channel: 'functions'.";
    sections.push(channels);
  }
  return sections.join('\n\n');
}

export function renderDeveloperContent(instructions: string | undefined, tools: readonly HarmonyTool[]): string {
  const sections: string[] = [];
  if (instructions !== undefined) sections.push('# Instructions', instructions);
  if (tools.length > 0) sections.push(renderToolsSection(tools));
  return sections.join('\n\n');
}

/** `# Tools` / `## functions` / the `namespace functions { … }` declaration. */
export function renderToolsSection(tools: readonly HarmonyTool[]): string {
  return renderNamespaces([{ name: 'functions', tools }]);
}

/**
 * `# Tools`, then per namespace `## NAME`, its description (as `//` comments when it declares
 * tools, else plain lines), and `namespace NAME { … }` when it has tools.
 */
export function renderNamespaces(namespaces: readonly ToolNamespace[]): string {
  const sections = ['# Tools'];
  for (const ns of namespaces) {
    const lines = [`## ${ns.name}\n`];
    if (ns.description !== undefined) for (const line of ns.description.split('\n')) lines.push(ns.tools.length ? `// ${line}` : line);
    if (ns.tools.length) {
      lines.push(`namespace ${ns.name} {\n`);
      for (const tool of ns.tools) {
        for (const line of tool.description.split('\n')) lines.push(`// ${line}`);
        const params = hasProperties(tool.parameters) ? `_: ${schemaToTs(tool.parameters, '')}` : '';
        lines.push(`type ${tool.name} = (${params}) => any;\n`);
      }
      lines.push(`} // namespace ${ns.name}`);
    }
    sections.push(lines.join('\n'));
  }
  return sections.join('\n\n');
}

/**
 * gpt-oss's built-in namespaces, word for word as openai/harmony declares them
 * (ToolNamespaceConfig::browser and ::python in src/chat.rs). The browser's search is itself a
 * search tool: an environment may expose its search under these names.
 */
export const BUILTIN_NAMESPACES: Record<BuiltinNamespace, ToolNamespace> = {
  browser: {
    name: 'browser',
    description:
      'Tool for browsing.\nThe `cursor` appears in brackets before each browsing display: `[{cursor}]`.\nCite information from the tool using the following format:\n`【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\nDo not quote more than 10 words directly from the tool output.\nsources=web (default: web)',
    tools: [
      {
        name: 'search',
        description: 'Searches for information related to `query` and displays `topn` results.',
        parameters: { type: 'object', properties: { query: { type: 'string' }, topn: { type: 'number', default: 10 }, source: { type: 'string' } }, required: ['query'] },
      },
      {
        name: 'open',
        description:
          'Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, showing `num_lines` lines.\nValid link ids are displayed with the formatting: `【{id}†.*】`.\nIf `cursor` is not provided, the most recent page is implied.\nIf `id` is a string, it is treated as a fully qualified URL associated with `source`.\nIf `loc` is not provided, the viewport will be positioned at the beginning of the document or centered on the most relevant passage, if available.\nUse this function without `id` to scroll to a new location of an opened page.',
        parameters: {
          type: 'object',
          properties: {
            id: { type: ['number', 'string'], default: -1 },
            cursor: { type: 'number', default: -1 },
            loc: { type: 'number', default: -1 },
            num_lines: { type: 'number', default: -1 },
            view_source: { type: 'boolean', default: false },
            source: { type: 'string' },
          },
        },
      },
      {
        name: 'find',
        description: 'Finds exact matches of `pattern` in the current page, or the page given by `cursor`.',
        parameters: { type: 'object', properties: { pattern: { type: 'string' }, cursor: { type: 'number', default: -1 } }, required: ['pattern'] },
      },
    ],
  },
  python: {
    name: 'python',
    description:
      "Use this tool to execute Python code in your chain of thought. The code will not be shown to the user. This tool should be used for internal reasoning, but not for code that is intended to be visible to the user (e.g. when creating plots, tables, or files).\n\nWhen you send a message containing Python code to python, it will be executed in a stateful Jupyter notebook environment. python will respond with the output of the execution or time out after 120.0 seconds. The drive at '/mnt/data' can be used to save and persist user files. Internet access for this session is UNKNOWN. Depends on the cluster.",
    tools: [],
  },
};

function hasProperties(schema: JsonSchema | undefined): schema is JsonSchema {
  const props = schema?.['properties'];
  return typeof props === 'object' && props !== null && Object.keys(props).length > 0;
}

type Schema = Record<string, unknown>;

const asSchema = (v: unknown): Schema => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Schema) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const isEnum = (s: Schema): boolean => Array.isArray(s['enum']) && s['enum'].length > 0;

/** `default: …`: plain strings JSON-quoted, enum members bare, anything else as JSON. */
function defaultComment(schema: Schema): string | undefined {
  if (!('default' in schema)) return undefined;
  const value = schema['default'];
  if (typeof value === 'string') return `default: ${isEnum(schema) ? value : JSON.stringify(value)}`;
  return `default: ${JSON.stringify(value)}`;
}

function commentLines(text: string, indent: string): string {
  return text
    .split('\n')
    .map((line) => `${indent}// ${line}\n`)
    .join('');
}

function withNull(schema: Schema, type: string): string {
  return schema['nullable'] === true && !type.includes('null') ? `${type} | null` : type;
}

/** JSON Schema to the TypeScript-like type Harmony declares tools with (docs/reference/FORMATS.md §1.4). */
export function schemaToTs(schemaIn: unknown, indent: string): string {
  const schema = asSchema(schemaIn);
  const oneOf = schema['oneOf'];
  if (Array.isArray(oneOf)) {
    return oneOf
      .map((v) => {
        const variant = asSchema(v);
        const comments = [str(variant['description']), defaultComment(variant)].filter((c) => c !== undefined);
        const type = withNull(variant, schemaToTs(variant, `${indent}   `));
        return `\n${indent} | ${type}${comments.length > 0 ? ` // ${comments.join(' ')}` : ''}`;
      })
      .join('');
  }
  const type = schema['type'];
  if (Array.isArray(type)) return type.map((t) => (t === 'integer' ? 'number' : String(t))).join(' | ');
  switch (type) {
    case 'object':
      return objectToTs(schema, indent);
    case 'string':
      return isEnum(schema) ? (schema['enum'] as unknown[]).map((v) => JSON.stringify(String(v))).join(' | ') : 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'items' in schema ? `${schemaToTs(schema['items'], indent)}[]` : 'Array<any>';
    default:
      return 'any';
  }
}

function objectToTs(schema: Schema, indent: string): string {
  let out = '';
  const description = str(schema['description']);
  if (description !== undefined) out += commentLines(description, indent);
  out += '{\n';
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
  for (const [key, value] of Object.entries(asSchema(schema['properties']))) {
    const prop = asSchema(value);
    const optional = required.has(key) ? '' : '?';
    const title = str(prop['title']);
    if (title !== undefined) out += `${indent}// ${title}\n${indent}//\n`;
    const propDescription = str(prop['description']);
    const oneOf = prop['oneOf'];
    if (!Array.isArray(oneOf) && propDescription !== undefined) out += commentLines(propDescription, indent);
    const examples = prop['examples'];
    if (Array.isArray(examples) && examples.length > 0) {
      out += `${indent}// Examples:\n`;
      for (const ex of examples) if (typeof ex === 'string') out += `${indent}// - "${ex}"\n`;
    }
    if (Array.isArray(oneOf)) {
      out += oneOfProperty(key + optional, prop, oneOf.map(asSchema), indent);
      continue;
    }
    const comment = defaultComment(prop);
    out += `${indent}${key}${optional}: ${withNull(prop, schemaToTs(prop, `${indent}    `))},${comment ? ` // ${comment}` : ''}\n`;
  }
  return `${out}${indent}}`;
}

/** A property whose schema is a oneOf: its comments above, then one ` | T` line per variant. */
function oneOfProperty(name: string, prop: Schema, variants: Schema[], indent: string): string {
  const description = str(prop['description']);
  // The property's description is not repeated when the first variant already says it.
  const describedAbove = description !== undefined && description !== str(variants[0]?.['description']);
  let out = describedAbove ? commentLines(description, indent) : '';
  const comment = defaultComment(prop);
  if (comment) out += `${indent}// ${comment}\n`;
  out += `${indent}${name}:\n`;
  variants.forEach((variant, i) => {
    const comments: string[] = [];
    const variantDescription = str(variant['description']);
    if (!(i === 0 && describedAbove) && variantDescription !== undefined && variantDescription !== description) {
      comments.push(variantDescription);
    }
    const variantDefault = defaultComment(variant);
    if (variantDefault) comments.push(variantDefault);
    const type = withNull(variant, schemaToTs(variant, `${indent}   `));
    out += `${indent} | ${type}${comments.length > 0 ? ` // ${comments.join(' ')}` : ''}\n`;
  });
  return `${out}${indent},\n`;
}

/** One message as pieces: `<|start|>{header}<|message|>{content}{terminator}`. */
export function messagePieces(message: HarmonyMessage, options: { terminator?: boolean } = {}): Piece[] {
  return [...headerPieces(message), message.content, ...(options.terminator === false ? [] : [sp(terminatorOf(message))])];
}

/** `<|start|>` through `<|message|>`. */
export function headerPieces(message: Omit<HarmonyMessage, 'content'>): Piece[] {
  const pieces: Piece[] = [sp('start'), message.author];
  const to = message.recipient !== undefined && message.recipient !== 'all' ? ` to=${message.recipient}` : '';
  const inRole = (message.recipientIn ?? (message.author === 'assistant' ? 'channel' : 'role')) === 'role';
  if (inRole) pieces.push(to);
  if (message.channel !== undefined) pieces.push(sp('channel'), message.channel);
  if (!inRole) pieces.push(to);
  const type = message.contentType;
  if (type !== undefined) {
    if (type.startsWith('<|constrain|>')) pieces.push(' ', sp('constrain'), type.slice('<|constrain|>'.length));
    else pieces.push(` ${type}`);
  }
  pieces.push(sp('message'));
  return pieces;
}

export function terminatorOf(message: Pick<HarmonyMessage, 'author' | 'recipient' | 'terminator'>): Terminator {
  return message.terminator ?? (message.author === 'assistant' && message.recipient !== undefined ? 'call' : 'end');
}

export interface HarmonyConversation {
  system?: HarmonySystemOptions;
  /** Developer message: instructions and function tools (omitted when both are absent). */
  developer?: { instructions?: string; tools?: readonly HarmonyTool[] };
  messages: readonly HarmonyMessage[];
}

export interface ConversationOptions {
  /**
   * The library's auto_drop_analysis: when the last assistant message is on the final channel,
   * leave out the analysis messages before the FIRST final one (analysis between finals stays).
   */
  dropAnalysis?: boolean;
  /** Default true: end with `<|start|>assistant`, ready for the assistant to answer (render_conversation_for_completion); false: just the messages (render_conversation). */
  nextTurn?: boolean;
}

/**
 * A whole conversation, by default ready for the assistant to answer. Used for references, tests
 * and SFT; episodes never re-render.
 */
export function renderConversation(conv: HarmonyConversation, options: ConversationOptions = {}): number[] {
  return encodePieces(conversationPieces(conv, options));
}

export function conversationPieces(conv: HarmonyConversation, options: ConversationOptions = {}): Piece[] {
  const tools = conv.developer?.tools ?? [];
  const pieces: Piece[] = [];
  if (conv.system) {
    pieces.push(...messagePieces({ author: 'system', content: renderSystemContent(conv.system, tools.length > 0) }));
  }
  if (conv.developer && (conv.developer.instructions !== undefined || tools.length > 0)) {
    pieces.push(...messagePieces({ author: 'developer', content: renderDeveloperContent(conv.developer.instructions, tools) }));
  }
  // The library's rule, exactly: only once the last assistant message is final, and only before the first final.
  const lastAssistant = conv.messages.findLast((m) => m.author === 'assistant');
  const firstFinal = conv.messages.findIndex((m) => m.channel === 'final');
  const drop = options.dropAnalysis === true && lastAssistant?.channel === 'final' && firstFinal >= 0;
  conv.messages.forEach((message, i) => {
    if (drop && message.channel === 'analysis' && i < firstFinal) return;
    // In history a finished answer is closed with <|end|>, not <|return|>.
    const terminator = message.terminator === 'return' ? 'end' : message.terminator;
    pieces.push(...messagePieces({ ...message, ...(terminator ? { terminator } : {}) }));
  });
  if (options.nextTurn !== false) pieces.push(sp('start'), 'assistant');
  return pieces;
}
