import { describe, expect, it } from 'vitest';
import { getRenderer, registerRenderer, rendererNames } from '../../src/protocol/registry.js';
import { QWEN3, qwenDecode, qwenEncode } from '../../src/protocol/qwen3/tokenizer.js';
import { cutAtAction, formatInformation, lastAnswer, parseTagAction, tagActionToCall } from '../../src/protocol/tags.js';
import { InputError } from '../../src/errors.js';

describe('Search-R1 tags', () => {
  it('takes the first closed search or answer', () => {
    expect(parseTagAction('<think>hm</think> <search> Cast Away director </search> <answer>x</answer>')).toMatchObject({
      kind: 'search',
      query: 'Cast Away director',
      status: 'ok',
    });
    const text = 'So: <answer> Robert Zemeckis </answer>';
    const act = parseTagAction(text);
    expect(act).toMatchObject({ kind: 'answer', answer: 'Robert Zemeckis', form: 'tag', status: 'ok' });
    expect(tagActionToCall(text, act)).toEqual({ name: 'answer', arguments: { answer: 'Robert Zemeckis' }, status: 'ok', raw: '<answer> Robert Zemeckis </answer>' });
  });

  it("reads the <<answer>> form of Training Search Agents with GRPO, and flags <<answer>> followed by the answer", () => {
    expect(parseTagAction('I think <<Paris>> or maybe <<Lyon>>')).toMatchObject({ kind: 'answer', answer: 'Lyon', form: 'double_angle', status: 'ok' });
    const text = 'Final: <<answer>> Paris\nthanks';
    const act = parseTagAction(text);
    expect(act).toMatchObject({ kind: 'answer', answer: 'Paris', status: 'off_form' });
    if (act.kind === 'answer') expect(text.slice(...act.span)).toBe('<<answer>> Paris');
  });

  it('an unclosed tag at the end is off-form; an empty search is unparseable; no tag is no action', () => {
    expect(parseTagAction('<search>hotpot magazine')).toMatchObject({ kind: 'search', query: 'hotpot magazine', status: 'off_form' });
    expect(parseTagAction('<search> </search>')).toMatchObject({ kind: 'search', status: 'unparseable' });
    expect(parseTagAction('I think it is Arthur’s Magazine.')).toEqual({ kind: 'none' });
  });

  it('scores the last answer, cuts after the first action, formats documents', () => {
    expect(lastAnswer('<answer>a</answer> then <answer> b </answer>')).toBe('b');
    expect(lastAnswer('none')).toBeUndefined();
    expect(cutAtAction('<search>q</search> and more <answer>x</answer>')).toBe('<search>q</search>');
    expect(cutAtAction('<answer>x</answer> trailing')).toBe('<answer>x</answer>');
    expect(formatInformation([{ title: 'A', text: 'one' }, { title: 'B', text: 'two' }])).toBe('<information>Doc 1(Title: A) one\nDoc 2(Title: B) two\n</information>');
  });
});

describe('renderer registry and the Qwen3 tags renderer', () => {
  it('lists the renderers and rejects unknown names with an InputError naming the value', async () => {
    expect(rendererNames()).toEqual(expect.arrayContaining(['harmony', 'qwen3', 'qwen3-thinking', 'qwen3-tags']));
    await expect(getRenderer('llama')).rejects.toThrow(InputError);
    await expect(getRenderer('llama')).rejects.toThrow(/"llama".*harmony/);
    const harmony = await getRenderer('harmony', { harmony: { currentDate: '2026-11-30' } });
    expect(harmony.name).toBe('harmony');
    expect(harmony.decode(harmony.prompt({ system: 's', user: 'u', tools: [] }))).toContain('Current date: 2026-11-30');
    registerRenderer('test-echo', async () => harmony);
    expect(await getRenderer('test-echo')).toBe(harmony);
    expect(() => registerRenderer('test-echo', async () => harmony)).toThrow(/already registered/);
  });

  it('qwen3-tags: search becomes a search call with a token span; results come back as <information>', async () => {
    const r = await getRenderer('qwen3-tags');
    const prompt = r.prompt({ system: 'Answer questions by searching Wikipedia.', user: 'Which magazine started first?', tools: [] });
    const promptText = r.decode(prompt);
    expect(promptText).toContain('<search> and </search>');
    expect(promptText.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    const sampled = [...qwenEncode("Let me check. <search>Arthur's Magazine first issue</search>"), QWEN3.imEnd];
    const turn = r.parse(sampled, { stopReason: 'stop' });
    expect(turn.calls).toHaveLength(1);
    const call = turn.calls[0]!;
    expect(call).toMatchObject({ name: 'search', arguments: { query: "Arthur's Magazine first issue" }, status: 'ok' });
    expect(qwenDecode(sampled.slice(...call.tokenSpan!))).toContain("<search>Arthur's Magazine first issue</search>");
    const inserted = r.toolResults(sampled, [{ call, result: { outcome: 'ok', content: "Doc 1(Title: Arthur's Magazine) 1844", chunkIds: [] } }]);
    expect(r.decode(inserted)).toBe(
      "\n<|im_start|>user\n<information>Doc 1(Title: Arthur's Magazine) 1844</information><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
    );
    const answer = r.parse([...qwenEncode('<answer>Arthur’s Magazine</answer>'), QWEN3.imEnd]);
    expect(answer.calls[0]).toMatchObject({ name: 'answer', arguments: { answer: 'Arthur’s Magazine' } });
    expect(r.parse([...qwenEncode('I am not sure.'), QWEN3.imEnd])).toMatchObject({ calls: [], final: true });
    expect(r.parse(qwenEncode('<search>half a que'), { stopReason: 'length' }).calls[0]!.status).toBe('unparseable');
    const written = r.writeTurn!({ calls: [{ name: 'answer', arguments: { answer: 'Robert Zemeckis' } }] });
    expect(r.decode(written)).toBe('<answer>Robert Zemeckis</answer><|im_end|>');
    expect(r.parse(written).calls[0]).toMatchObject({ name: 'answer', arguments: { answer: 'Robert Zemeckis' }, status: 'ok' });
    expect(() => r.writeTurn!({ calls: [{ name: 'curate', arguments: {} }] })).toThrow(/only search and answer/);
  });
});
