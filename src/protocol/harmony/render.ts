import type { JsonSchema } from '../../env/types.js';
import { encodePieces, sp, type Piece } from './tokens.js';

/**
 * Harmony rendering (FORMATS.md §1.2–1.7), checked byte for byte against the shared vectors from
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

export function renderSystemContent(options: HarmonySystemOptions, hasFunctionTools: boolean): string {
  const top = [options.modelIdentity ?? DEFAULT_MODEL_IDENTITY, `Knowledge cutoff: ${options.knowledgeCutoff ?? '2024-06'}`];
  if (options.currentDate !== undefined) top.push(`Current date: ${options.currentDate}`);
  let channels = `# Valid channels: ${CHANNELS.join(', ')}. Channel must be included for every message.`;
  if (hasFunctionTools) channels += "\nCalls to these tools must go to the commentary channel: 'functions'.";
  return [top.join('\n'), `Reasoning: ${options.reasoningEffort ?? 'medium'}`, channels].join('\n\n');
}

export function renderDeveloperContent(instructions: string | undefined, tools: readonly HarmonyTool[]): string {
  const sections: string[] = [];
  if (instructions !== undefined) sections.push('# Instructions', instructions);
  if (tools.length > 0) sections.push(renderToolsSection(tools));
  return sections.join('\n\n');
}

/** `# Tools` / `## functions` / the `namespace functions { … }` declaration. */
export function renderToolsSection(tools: readonly HarmonyTool[]): string {
  const lines = ['## functions\n', 'namespace functions {\n'];
  for (const tool of tools) {
    for (const line of tool.description.split('\n')) lines.push(`// ${line}`);
    const params = hasProperties(tool.parameters) ? `_: ${schemaToTs(tool.parameters, '')}` : '';
    lines.push(`type ${tool.name} = (${params}) => any;\n`);
  }
  lines.push('} // namespace functions');
  return ['# Tools', lines.join('\n')].join('\n\n');
}

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

/** JSON Schema to the TypeScript-like type Harmony declares tools with (FORMATS.md §1.4). */
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

/**
 * A whole conversation, ready for the assistant to answer (ends with `<|start|>assistant`).
 * With `dropAnalysis`, analysis messages followed later by a final message are left out (the
 * Harmony rule for history). Used for references, tests and SFT; episodes never re-render.
 */
export function renderConversation(conv: HarmonyConversation, options: { dropAnalysis?: boolean } = {}): number[] {
  return encodePieces(conversationPieces(conv, options));
}

export function conversationPieces(conv: HarmonyConversation, options: { dropAnalysis?: boolean } = {}): Piece[] {
  const tools = conv.developer?.tools ?? [];
  const pieces: Piece[] = [];
  if (conv.system) {
    pieces.push(...messagePieces({ author: 'system', content: renderSystemContent(conv.system, tools.length > 0) }));
  }
  if (conv.developer && (conv.developer.instructions !== undefined || tools.length > 0)) {
    pieces.push(...messagePieces({ author: 'developer', content: renderDeveloperContent(conv.developer.instructions, tools) }));
  }
  const lastFinal = conv.messages.findLastIndex((m) => m.author === 'assistant' && m.channel === 'final');
  conv.messages.forEach((message, i) => {
    if (options.dropAnalysis && message.channel === 'analysis' && message.recipient === undefined && i < lastFinal) return;
    // In history a finished answer is closed with <|end|>, not <|return|>.
    const terminator = message.terminator === 'return' ? 'end' : message.terminator;
    pieces.push(...messagePieces({ ...message, ...(terminator ? { terminator } : {}) }));
  });
  pieces.push(sp('start'), 'assistant');
  return pieces;
}
