// Token ids for hard strings from an independent implementation of the
// byte-level BPE: the JavaScript port of Hugging Face's tokenizers
// (@huggingface/transformers, from the npm registry; not a dependency of
// attntrace). Run once, after make_tiny_models.py, and commit its output:
//
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @huggingface/transformers@3.8.1 --ignore-scripts)
//   node tests/models/tokenizer_ids.mjs /tmp/tok/node_modules/@huggingface/transformers/dist/transformers.node.mjs
//
// writes tests/models/tiny-gpt2/tokenizer-cases.json: each text with its ids,
// which tests/test_hf_models.cpp holds our tokenizer to.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const lib = await import(process.argv[2]);
const dir = path.join(here, "tiny-gpt2");
const tokenizerJson = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
const tokenizer = new lib.GPT2Tokenizer(tokenizerJson, { model_max_length: 64 });

const texts = [
  "the ring fell",
  "café naïve résumé Ærøskøbing",        // accents: letters of \p{L} beyond ASCII
  "日本語のテキスト、中文。",              // CJK and their punctuation
  "emoji 🙂👍🏽 and ❤️ flags 🇫🇷",          // 4-byte characters, modifiers, ZWJ-free sequences
  "12345 3.14159 1,000,000 ٣٤٥ ½",        // numbers, Arabic-Indic digits (\p{N}), a vulgar fraction
  "I'm we'll they've don't it's YOU'RE",  // contractions (GPT-2's are lower-case only)
  "a   b    c\t\td\n\n e  ",                // runs of spaces and tabs, newlines, trailing spaces
  "the<|endoftext|>ring <|endoftext|>",    // the added token inside text
  "Ωmega ß straße ǅ ﬁ",                   // Greek, sharp s, a titlecase digraph, a ligature
  "\u00a0nbsp\u2003em\u3000ideographic",   // Unicode white space the pattern's \s must know
];
const cases = texts.map((text) => ({ text, ids: tokenizer.encode(text, { add_special_tokens: false }) }));
const out = {
  made_by: `tests/models/tokenizer_ids.mjs with @huggingface/transformers ${lib.env?.version ?? ""} (GPT2Tokenizer on tiny-gpt2/tokenizer.json)`,
  cases,
};
fs.writeFileSync(path.join(dir, "tokenizer-cases.json"), JSON.stringify(out, null, 1).replace(/\[\s*([0-9,\s]+?)\s*\]/g, (m, ids) => "[" + ids.replace(/\s+/g, "") + "]") + "\n");
console.log(cases.map((c) => `${JSON.stringify(c.text)}: ${c.ids.length} ids`).join("\n"));
