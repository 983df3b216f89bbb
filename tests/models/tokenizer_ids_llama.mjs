// Token ids for hard strings from an independent implementation of Llama's
// tokenizer: the JavaScript port of Hugging Face's tokenizers
// (@huggingface/transformers, from the npm registry; not a dependency of
// attntrace), its LlamaTokenizer on tiny-llama/tokenizer.json (the
// SentencePiece model as tokenizers' BPE with byte fallback, which
// make_tiny_llama.py writes as Hugging Face's LlamaConverter does). attntrace
// reads tokenizer.model through Google's sentencepiece library instead, so
// the two agree only if both read the model alike. Run once, after
// make_tiny_llama.py, and commit its output:
//
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @huggingface/transformers@3.8.1 --ignore-scripts)
//   node tests/models/tokenizer_ids_llama.mjs /tmp/tok/node_modules/@huggingface/transformers/dist/transformers.node.mjs
//
// writes tests/models/tiny-llama/tokenizer-cases.json: each text with its ids
// (<s> first, as add_bos_token says), and tiny-llama3-tokenizer/tokenizer-cases.json
// (the byte-level BPE in Llama 3's form: its Split pattern, ignore_merges,
// <|begin_of_text|> from the post-processor), which tests/test_hf_llama.cpp holds ours to.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const lib = await import(process.argv[2]);
const dir = path.join(here, "tiny-llama");
const tokenizerJson = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
const tokenizer = new lib.LlamaTokenizer(tokenizerJson, tokenizerConfig);

const texts = [
  "the ring fell",
  "The ring fell, and the king's ring fell too.",
  "café naïve résumé Ærøskøbing",        // accents: characters the model lacks, as bytes (byte fallback)
  "日本語のテキスト、中文。",              // CJK: three bytes each
  "emoji 🙂👍🏽 and ❤️ flags 🇫🇷",          // 4-byte characters, modifiers
  "12345 3.14159 1,000,000 ٣٤٥ ½",        // digits split one by one (split_digits)
  "I'm we'll they've don't it's YOU'RE",  // contractions: no pre-tokenizer, pieces only
  "a   b    c\t\td\n\n e  ",                // runs of spaces (▁ each), tabs and newlines as bytes
  "rings of gold, rings of iron",
  " leading space and trailing ",
];
function write(folder, tok, what) {
  const cases = texts.map((text) => ({ text, ids: tok.encode(text) }));
  const out = {
    made_by: `tests/models/tokenizer_ids_llama.mjs with @huggingface/transformers ${lib.env?.version ?? ""} (${what})`,
    cases,
  };
  fs.writeFileSync(path.join(folder, "tokenizer-cases.json"), JSON.stringify(out, null, 1).replace(/\[\s*([0-9,\s]+?)\s*\]/g, (m, ids) => "[" + ids.replace(/\s+/g, "") + "]") + "\n");
  console.log(cases.map((c) => `${JSON.stringify(c.text)}: ${c.ids.length} ids`).join("\n"));
}
write(dir, tokenizer, "LlamaTokenizer on tiny-llama/tokenizer.json");

texts.push("HELLO World's 1234567 ''s\r\n\r\nx", "tab\tand\u00a0nbsp!!!\n\n\n");  // Llama 3's case-insensitive contractions, digits by three, CR LF
const dir3 = path.join(here, "tiny-llama3-tokenizer");
const json3 = JSON.parse(fs.readFileSync(path.join(dir3, "tokenizer.json"), "utf8"));
write(dir3, new lib.PreTrainedTokenizer(json3, {}), "PreTrainedTokenizer on tiny-llama3-tokenizer/tokenizer.json");
