// The search engine against a brute-force scan of the same docs (reference-suite.ts): corpora of 3,000 docs, one with
// rare words (queries led by a narrow term); apart from reference.test.ts so that the two run at once.
import { describeReference, RARE_WORDS } from "./reference-suite.ts";

describeReference([
  [5, 3000, []],
  [6, 3000, RARE_WORDS],
]);
