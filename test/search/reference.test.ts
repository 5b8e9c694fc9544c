// The search engine against a brute-force scan of the same docs (reference-suite.ts): corpora of 400 docs, and one of
// 3,000 (where the commonest words reach the "broad term" path, over 1,024 docs); reference-large.test.ts has the rest.
import { describeReference } from "./reference-suite.ts";

describeReference([
  [1, 400, []],
  [2, 400, []],
  [3, 400, []],
  [4, 3000, []],
]);
