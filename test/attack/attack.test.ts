import { describe, expect, it } from 'vitest';
import { PROBES, runAttacks, summarize } from '../../scripts/attack/probes.js';

/**
 * The attack suite under `npm test` (the same cases `npm run attack` tabulates): every probe class
 * against the built CLI (dist/: `npm test` builds first). Each case must not crash, hang, lose a
 * file sleuth did not write or leak outside bytes, and must behave as its checks say.
 */
describe('attack suite', () => {
  for (const name of Object.keys(PROBES)) {
    it(name, async () => {
      const results = await runAttacks([name]);
      expect(results.length).toBeGreaterThan(0);
      const misbehaved = results.filter((r) => r.crashed || r.hung || r.filesLost > 0 || r.leaked || r.wrong.length > 0).map((r) => ({ case: r.name, crashed: r.crashed, hung: r.hung, filesLost: r.filesLost, leaked: r.leaked, wrong: r.wrong, said: r.said }));
      expect(misbehaved).toEqual([]);
      const [row] = summarize(results);
      expect(row).toMatchObject({ crashes: 0, hangs: 0, filesLost: 0, leaks: 0 });
    }, 600_000);
  }
});
