import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pythonSdk, runPythonJson, type PythonSdks } from '../fixtures/python-sdks.js';
import { SEARCH_TOOL, SEARCHED, SYSTEM, toolCallingCheckpoint, USER } from './helpers.js';

/**
 * The official OpenAI Python SDK against `sleuth serve`: openai_sdk.py calls every feature the
 * server claims, validating each response and streamed chunk with the SDK's types. Skipped, saying
 * how to enable it, where no Python has the SDK and pip cannot install it (test/fixtures/python-sdks.ts).
 */

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), 'openai_sdk.py');

let sdks: PythonSdks;
let skip: string | undefined;
let checkpoint = '';
let base = '';
let child: ReturnType<typeof spawn> | undefined;

beforeAll(async () => {
  const got = pythonSdk('openai');
  if ('skip' in got) return void (skip = got.skip);
  sdks = got;
  checkpoint = await toolCallingCheckpoint();
  child = spawn(process.execPath, ['bin/sleuth.js', 'serve', '--checkpoint', checkpoint, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  while (!/listening on (\S+)/.test(out)) {
    const [chunk] = (await once(child.stdout!, 'data')) as [string];
    out += chunk;
  }
  base = /listening on (\S+)/.exec(out)![1]!;
}, 900_000);

beforeEach((context) => {
  if (skip) context.skip(skip);
});

afterAll(() => {
  child?.kill();
});

function drive(): Promise<Record<string, any>> {
  const spec = { system: SYSTEM, user: USER, tool: SEARCH_TOOL, prompt: 'Paris is the capital', prompt2: 'A search agent' };
  return runPythonJson(sdks, DRIVER, [base, checkpoint, JSON.stringify(spec)]);
}

describe('the official OpenAI Python SDK against sleuth serve', () => {
  it('streams chat with tool-call deltas, honours stop, tool_choice, top_logprobs and batches, retrieves the model, and refuses what it does not support', async () => {
    const r = await drive();
    const call = { name: 'bm25_search', arguments: { query: SEARCHED } };
    expect(r['models']).toEqual([checkpoint]);
    expect(r['retrieved']).toBe(checkpoint);
    expect(r['retrieve_missing'].status).toBe(404);

    expect(r['chat']).toEqual({ calls: [call], finish: 'tool_calls' });
    // The stream says the same thing as the plain answer, in deltas, with usage last.
    expect(r['chat_stream'].calls).toEqual([call]);
    expect(r['chat_stream'].finish).toBe('tool_calls');
    expect(r['chat_stream'].first_role).toBe('assistant');
    expect(r['chat_stream'].chunks).toBeGreaterThan(3);
    expect(r['chat_stream'].usage.completion_tokens).toBeGreaterThan(5);

    expect(r['tool_choice_none'].calls).toEqual([]);
    expect(r['tool_choice_none'].finish).not.toBe('tool_calls');
    expect(r['tool_choice_none'].content_is_str).toBe(true);
    expect(r['tool_choice_required'].length).toBeGreaterThan(0);
    expect(r['tool_choice_named']).toEqual(['bm25_search']);
    expect(r['tool_choice_unknown'].status).toBe(400);
    expect(r['tool_choice_unknown'].message).toMatch(/function 'nope' is not among the tools/);

    // Three alternatives per token, most likely first; greedy picks the first.
    for (const t of r['top_logprobs']) {
      expect(t.top).toHaveLength(3);
      expect(t.top[0][0]).toBe(t.token);
      expect(t.top[0][1]).toBeCloseTo(t.logprob, 6);
      expect(t.top[0][1]).toBeGreaterThanOrEqual(t.top[1][1]);
      expect(t.top[1][1]).toBeGreaterThanOrEqual(t.top[2][1]);
    }

    const stop = r['stop'];
    expect(stop.text).toBe(stop.free.slice(0, stop.free.indexOf(stop.stop)));
    expect(stop.finish).toBe('stop');
    expect(r['chat_stop_calls']).toEqual([call]);

    expect(r['completion_stream'].text).toBe(stop.free);
    expect(r['completion_stream'].chunks).toBeGreaterThan(5);
    expect(r['completion_stream'].finish).toHaveLength(1);

    expect(r['batch'].indexes).toEqual([0, 1, 2, 3]);
    expect(r['batch'].top).toEqual([2, 2, 2, 2]);
    expect(r['batch_text']).toBe(2);

    expect(r['response_format']).toMatchObject({ status: 400 });
    expect(r['response_format'].message).toMatch(/unsupported parameter: response_format/);
    // OpenAI's error fields, as the Python SDK reads them.
    expect(r['response_format']).toMatchObject({ param: 'response_format', code: 'unsupported_parameter' });
    expect(r['penalties'].message).toMatch(/unsupported parameters: frequency_penalty, presence_penalty/);
    expect(r['echo'].message).toMatch(/unsupported parameter: echo/);
    expect(r['get_chat']).toEqual({ status: 405, allow: 'POST' });
    expect(r['text_plain']).toBe(415);
  });
});
