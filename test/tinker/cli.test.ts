import { spawn, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADAM, connect, directBackend, listeningUrl, rlDatums, tempDir, tinyCheckpoint } from '../backend/tinker/helpers.js';

const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/sleuth.js', ...args], { encoding: 'utf8', env: { ...process.env, SLEUTH_TINKER_FAULTS: '' } });

let checkpoint: string;
beforeAll(async () => {
  checkpoint = await tinyCheckpoint();
});

describe('sleuth serve-tinker', () => {
  it('serves the Tinker API on 127.0.0.1 with injected faults, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/sleuth.js', 'serve-tinker', '--port', '0', '--checkpoint', checkpoint, '--dir', tempDir(), '--poll-timeout-ms', '200'], {
      env: { ...process.env, SLEUTH_TINKER_FAULTS: 'forward_backward:1=429@0.05,optim_step:1=lose,retrieve_future:2=try_again' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      const url = await listeningUrl(child);
      expect(stderr).toMatch(/injecting 3 fault\(s\)/);
      const direct = directBackend(checkpoint);
      const remote = await connect(url);
      const a = direct.forwardBackwardSync(rlDatums(), 'importance_sampling');
      direct.optimStepSync(ADAM);
      const r = await remote.forwardBackwardAndStep(rlDatums(), 'importance_sampling', {}, ADAM);
      expect(r.forwardBackward.logprobs).toEqual(a.logprobs);
      expect(r.optim.metrics['step']).toBe(1);
      // The next forward pass sees weights stepped once, exactly as the direct backend's.
      const b = direct.forwardBackwardSync(rlDatums(), 'importance_sampling');
      expect((await remote.forwardBackward(rlDatums(), 'importance_sampling')).logprobs).toEqual(b.logprobs);
      remote.close();
    } finally {
      const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('rejects bad flags with exit status 2, naming the flag', () => {
    const cases: [string[], RegExp][] = [
      [['--flavor', 'grpc', '--checkpoint', 'x'], /--flavor must be tinker or skyrl, got 'grpc'/],
      [['--faults', 'optim_step=lose', '--checkpoint', 'x'], /--faults: rule 'optim_step=lose' must look like/],
      [['--port', '70000', '--checkpoint', 'x'], /--port must be a whole number from 0 to 65535/],
      [['--checkpoint', '/nonexistent/model.ckpt', '--port', '0'], /checkpoint \/nonexistent\/model.ckpt: cannot read/],
      [['--bogus'], /serve-tinker: unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const r = cli('serve-tinker', ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
