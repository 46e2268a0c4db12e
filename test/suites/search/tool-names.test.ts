import { describe, expect, it } from 'vitest';
import { callSyntax } from '../../../src/cli/commands/play.js';
import { toolShorthand } from '../../../src/env/tool-spec.js';
import { REFERENCE_TOOLS, takesReferences } from '../../../src/protocol/compact/references.js';
import { openingSearch } from '../../../src/suites/search/opening.js';
import { searchSuite } from '../../../src/suites/search/suite.js';
import { SEARCH_LOOKUP_TOOLS, SEARCH_TOOL, SEARCH_TOOLS } from '../../../src/suites/search/tools.js';
import type { AgentContext } from '../../../src/agent/types.js';

/** The search tools are named in tools.ts's table; everything else reads them from it. */
describe("the search suite's tool table", () => {
  const names = Object.keys(SEARCH_TOOLS);

  it('names every tool once, in the order models are shown them', () => {
    expect(names).toEqual(['bm25_search', 'grep_corpus', 'read_document', 'curate', 'drop_curated', 'finish']);
    expect(Object.entries(SEARCH_TOOL)).toEqual(names.map((n) => [n, n]));
    expect(searchSuite.tools.map((t) => t.name)).toEqual(names);
  });

  it('marks the lookups, which the suite reports as its lookup tools', () => {
    expect([...SEARCH_LOOKUP_TOOLS]).toEqual(['bm25_search', 'grep_corpus']);
    expect(searchSuite.lookupTools).toBe(SEARCH_LOOKUP_TOOLS);
  });

  it("holds the compact format's reference tools, with the string argument each expands into", () => {
    const shorthand = (name: string) => toolShorthand(searchSuite.tools.find((t) => t.name === name)!);
    expect(shorthand(REFERENCE_TOOLS.search)).toEqual({ kind: 'string', key: 'query' });
    expect(shorthand(REFERENCE_TOOLS.scan)).toEqual({ kind: 'string', key: 'pattern' });
    expect(names.filter(takesReferences)).toEqual([REFERENCE_TOOLS.search, REFERENCE_TOOLS.scan]);
  });

  it("is where the opening search and play's help get the names", () => {
    const ctx = { task: { query: 'who wrote it' } } as AgentContext;
    expect(openingSearch(5)(ctx)).toEqual([{ name: 'bm25_search', arguments: { query: 'who wrote it', k: 5 } }]);
    expect(callSyntax(searchSuite.tools)).toEqual(['bm25_search QUERY', 'grep_corpus PATTERN', 'read_document ID', 'curate IDS...', 'drop_curated IDS...', 'finish']);
  });
});
