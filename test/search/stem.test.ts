import { describe, expect, it } from "vitest";
import { stem } from "../../src/search/stem.ts";

// Outputs of the reference Porter2 (Snowball English) stemmer.
describe("stem (Porter2)", () => {
  it.each([
    ["dresses", "dress"], ["dress", "dress"], ["boots", "boot"], ["running", "run"], ["runs", "run"],
    ["caresses", "caress"], ["ponies", "poni"], ["ties", "tie"], ["cries", "cri"], ["cats", "cat"],
    ["gas", "gas"], ["gaps", "gap"], ["kiwis", "kiwi"], ["feed", "feed"], ["agreed", "agre"],
    ["plastered", "plaster"], ["motoring", "motor"], ["sing", "sing"], ["hopping", "hop"], ["hoping", "hope"],
    ["falling", "fall"], ["fizzed", "fizz"], ["happiness", "happi"], ["happy", "happi"], ["cry", "cri"],
    ["by", "by"], ["say", "say"], ["generously", "generous"], ["generate", "generat"], ["communication", "communic"],
    ["consign", "consign"], ["consigned", "consign"], ["consignment", "consign"], ["consistency", "consist"],
    ["consolation", "consol"], ["console", "consol"], ["knackeries", "knackeri"], ["kneel", "kneel"],
    ["skies", "sky"], ["dying", "die"], ["news", "news"], ["proceed", "proceed"], ["innings", "inning"],
    ["relational", "relat"], ["conditional", "condit"], ["rational", "ration"], ["valency", "valenc"],
    ["digitizer", "digit"], ["conformabli", "conform"], ["radically", "radic"], ["differently", "differ"],
    ["vilely", "vile"], ["analogously", "analog"], ["vietnamization", "vietnam"], ["predication", "predic"],
    ["operator", "oper"], ["feudalism", "feudal"], ["decisiveness", "decis"], ["hopefulness", "hope"],
    ["callousness", "callous"], ["formality", "formal"], ["sensitivity", "sensit"], ["sensibility", "sensibl"],
    ["triplicate", "triplic"], ["formative", "format"], ["formalize", "formal"], ["electrical", "electr"],
    ["adjustable", "adjust"], ["adoption", "adopt"], ["controll", "control"], ["roll", "roll"],
    ["sweaters", "sweater"], ["leather", "leather"], ["sleeveless", "sleeveless"], ["sayyid", "sayyid"],
    ["yellow", "yellow"], ["eyes", "eye"], ["jeans", "jean"], ["shoes", "shoe"], ["heels", "heel"],
    ["a", "a"], ["is", "is"],
  ])("%s -> %s", (word, expected) => {
    expect(stem(word)).toBe(expected);
  });
});
