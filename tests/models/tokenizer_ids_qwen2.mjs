// Token ids for hard strings from an independent implementation of Qwen2's
// tokenizer: the JavaScript port of Hugging Face's tokenizers
// (@huggingface/transformers, from the npm registry; not a dependency of
// attntrace), its PreTrainedTokenizer on tiny-qwen2/tokenizer.json
// (make_tiny_llama.py: Qwen2's NFC normalizer, its Split pattern, ByteLevel,
// its special tokens), and on the same file with each other normalizer
// attntrace reads put in its place (NFD, NFKC, NFKD, Lowercase, a Sequence).
// Run once, after make_tiny_llama.py, and commit its output:
//
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @huggingface/transformers@3.8.1 --ignore-scripts)
//   node tests/models/tokenizer_ids_qwen2.mjs /tmp/tok/node_modules/@huggingface/transformers/dist/transformers.node.mjs
//
// writes tests/models/tiny-qwen2/tokenizer-cases.json, which tests/test_hf_qwen2_tokenizer.cpp holds ours to.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const lib = await import(process.argv[2]);
const dir = path.join(here, "tiny-qwen2");
const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));

const texts = [
  "the ring fell",
  "The ring fell, and the king's ring fell too.",
  "café naïve résumé crème",                        // precomposed: é è ï are pieces of the vocabulary
  "cafe\u0301 nai\u0308ve re\u0301sume\u0301 cre\u0300me",  // the same decomposed: NFC makes them the pieces above
  "A\u030a \u212b \u2126 a\u0323\u0302 a\u0302\u0323 \u1100\u1161",  // Å by mark, the Ångström and Ohm signs, mark order, Hangul jamo
  "ﬁne ² Ｆｕｌｌ ①  ﷺ",                          // compatibility characters: kept by NFC, folded by NFKC
  "İstanbul ÀÉÎÕÜ ΑΒΓ Жук",                      // capitals: Lowercase's İ is two characters
  "日本語のテキスト、中文。",                      // CJK: three bytes each
  "emoji 🙂👍🏽 and ❤️ flags 🇫🇷",                // 4-byte characters, modifiers
  "12345 3.14159 1,000,000 ٣٤٥ ½",              // digits one by one (Qwen2's \\p{N})
  "I'm we'll they've don't it's YOU'RE",        // contractions, case-insensitive
  "a   b    c\t\td\n\n e  ",                       // runs of spaces, tabs and newlines
  "\ue000 \u0378 \ufffd \u0000 \u200b",          // private use, unassigned, replacement, NUL, zero-width space
  "<|im_start|>user\nhe\u0301llo<|im_end|><|endoftext|>",  // special tokens taken whole, the text between normalized
];
const variants = [
  null,  // the file's own normalizer (NFC)
  { type: "NFD" },
  { type: "NFKC" },
  { type: "NFKD" },
  { type: "Lowercase" },
  { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Lowercase" }] },
];
const out = {
  made_by: `tests/models/tokenizer_ids_qwen2.mjs with @huggingface/transformers ${lib.env?.version ?? ""} ` +
    "(PreTrainedTokenizer on tiny-qwen2/tokenizer.json, its normalizer replaced by each variant's)",
  variants: variants.map((normalizer) => {
    const doc = structuredClone(json);
    if (normalizer) doc.normalizer = normalizer;
    const tok = new lib.PreTrainedTokenizer(doc, {});
    return { normalizer: doc.normalizer, cases: texts.map((text) => ({ text, ids: tok.encode(text) })) };
  }),
};
fs.writeFileSync(path.join(dir, "tokenizer-cases.json"),
  JSON.stringify(out, null, 1).replace(/\[\s*([0-9,\s]+?)\s*\]/g, (m, ids) => "[" + ids.replace(/\s+/g, "") + "]") + "\n");
for (const v of out.variants) console.log(JSON.stringify(v.normalizer), v.cases.map((c) => c.ids.length).join(" "));
