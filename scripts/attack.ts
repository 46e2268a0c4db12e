/**
 * npm run attack: the attack suite (scripts/attack/probes.ts) against the built CLI, as a table of
 * probe class | cases | crashes | hangs | files lost | leaks, and every case that misbehaved.
 * --verbose shows what each case said. Exits 1 when any cell of the last four columns is not 0 or a case did not behave as it should.
 */
import { runAttacks, summarize, table } from './attack/probes.js';

const verbose = process.argv.includes('--verbose');
const results = await runAttacks();
console.log(table(summarize(results)));
if (verbose) for (const r of results) console.log(`\n${r.probe} / ${r.name}\n  ${r.said ?? ''}`);
const bad = results.filter((r) => r.crashed || r.hung || r.filesLost > 0 || r.leaked || r.wrong.length > 0);
for (const r of bad) console.log(`\n${r.probe} / ${r.name}:${r.crashed ? ' crashed' : ''}${r.hung ? ' hung' : ''}${r.filesLost ? ` lost ${r.filesLost} files` : ''}${r.leaked ? ' leaked' : ''}${r.wrong.length ? `\n  ${r.wrong.join('\n  ')}` : ''}`);
console.log(`\n${results.length} cases, ${bad.length} misbehaved`);
process.exitCode = bad.length > 0 ? 1 : 0;
