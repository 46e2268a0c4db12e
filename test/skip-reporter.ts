import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * After the run, lists every test that skipped with a reason (`context.skip(reason)`, see
 * test/unavailable.ts) and every test file the config left out (Chromium missing), one line each,
 * so a run that passes says plainly what it did not check and how to enable it.
 */
export class SkipReasonReporter implements Reporter {
  constructor(private readonly leftOut: { file: string; reason: string }[]) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = this.leftOut.map(({ file, reason }) => `${file} (whole file): ${reason}`);
    for (const module of testModules) {
      const file = relative(process.cwd(), module.moduleId);
      const byReason = new Map<string, number>();
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === 'skipped' && result.note) byReason.set(result.note, (byReason.get(result.note) ?? 0) + 1);
      }
      for (const [reason, count] of byReason) lines.push(`${file} (${count} test${count === 1 ? '' : 's'}): ${reason}`);
    }
    if (lines.length === 0) return;
    console.log(`\nSkipped, and how to enable them (SLEUTH_TEST_ALL=1 makes a skip an error):\n${lines.map((l) => `  - ${l}`).join('\n')}`);
  }
}
