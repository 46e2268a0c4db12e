/**
 * Tests that need something outside this repository (an official Python SDK, Chromium, the source
 * data in ../shared/data) skip when it is missing, with one line saying how to enable them; the
 * reporter in test/skip-reporter.ts lists those lines after the run. Under SLEUTH_TEST_ALL=1 (set by
 * .ci/run) nothing may skip: the missing thing is an error instead, so CI runs every test.
 */
export const TEST_ALL = process.env['SLEUTH_TEST_ALL'] === '1';

/** The reason to skip, or (under SLEUTH_TEST_ALL=1) an error saying what is missing. */
export function unavailable(reason: string): string {
  if (TEST_ALL) throw new Error(`SLEUTH_TEST_ALL=1, and a test would skip: ${reason}`);
  return reason;
}
