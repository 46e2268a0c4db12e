import type { Renderer, WrittenTurn } from './types.js';

/** Renderers that write a turn as text (the compact format) rather than tokens. */
type TextTurnWriter = Renderer & { renderAssistant?(text: string, calls: { name: string; arguments: unknown }[]): string };

/** Whether writeTurnTokens can write this renderer's turns. */
export function canWriteTurns(renderer: Renderer): boolean {
  return renderer.writeTurn !== undefined || (renderer as TextTurnWriter).renderAssistant !== undefined;
}

/**
 * The tokens a model following the renderer's format exactly would write for a turn: the
 * renderer's writeTurn, or its text form encoded. Throws for a renderer that can do neither.
 */
export function writeTurnTokens(renderer: Renderer, turn: WrittenTurn): number[] {
  if (renderer.writeTurn) return renderer.writeTurn(turn);
  const w = renderer as TextTurnWriter;
  if (w.renderAssistant) return renderer.encode(w.renderAssistant(turn.text ?? '', turn.calls));
  throw new Error(`renderer ${renderer.name} cannot write turns (no writeTurn)`);
}
