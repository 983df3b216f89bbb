// The text that ids spell, from an independent implementation of the
// byte-level BPE's decoder: the JavaScript port of Hugging Face's tokenizers
// (@huggingface/transformers, from the npm registry; not a dependency of
// attntrace). For each byte-level folder it decodes the ids of every case of
// its tokenizer-cases.json (made by the tokenizer_ids*.mjs scripts), and a
// few id runs that cut a character between two tokens (each prefix of an
// emoji's ids, which decode to U+FFFD where a character is incomplete), with
// skip_special_tokens false and clean_up_tokenization_spaces false (the text
// the ids spell, special tokens as written: what Tokenizer::decode gives).
// Run once, after the tokenizer_ids*.mjs scripts, and commit its output:
//
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @huggingface/transformers@3.8.1 --ignore-scripts)
//   node tests/models/tokenizer_decoded.mjs /tmp/tok/node_modules/@huggingface/transformers/dist/transformers.node.mjs
//
// writes decode-cases.json beside each folder's tokenizer-cases.json, which
// tests/test_hf_tokenizers.cpp holds Tokenizer::decode to.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const lib = await import(process.argv[2]);
const options = { skip_special_tokens: false, clean_up_tokenization_spaces: false };

for (const folder of ["tiny-gpt2", "tiny-llama3-tokenizer", "tiny-qwen2"]) {
  const dir = path.join(here, folder);
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const tokenizer = new lib.PreTrainedTokenizer(json, {});
  const doc = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer-cases.json"), "utf8"));
  const given = doc.cases ?? doc.variants[0].cases;  // tiny-qwen2's: its own normalizer's ids
  const runs = given.map((c) => c.ids);
  // prefixes of the ids of a 4-byte character and of a CJK run: characters cut between tokens
  for (const text of ["🙂👍🏽", "日本語"]) {
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    for (let n = 1; n < ids.length; ++n) runs.push(ids.slice(0, n));
  }
  const cases = runs.map((ids) => ({ ids, text: tokenizer.decode(ids, options) }));
  const out = {
    made_by: `tests/models/tokenizer_decoded.mjs with @huggingface/transformers ${lib.env?.version ?? ""} (PreTrainedTokenizer on ${folder}/tokenizer.json, decode with skip_special_tokens and clean_up_tokenization_spaces false)`,
    cases,
  };
  fs.writeFileSync(path.join(dir, "decode-cases.json"), JSON.stringify(out, null, 1).replace(/\[\s*([0-9,\s]+?)\s*\]/g, (m, ids) => "[" + ids.replace(/\s+/g, "") + "]") + "\n");
  console.log(`${folder}: ${cases.length} id runs decoded`);
}
