// Token ids for hard strings from an independent implementation of BERT's
// WordPiece: the JavaScript port of Hugging Face's tokenizers
// (@huggingface/transformers, from the npm registry; not a dependency of
// attntrace). Run once, after make_tiny_models.py --bert, and commit its output:
//
//   mkdir -p /tmp/tok && (cd /tmp/tok && npm install @huggingface/transformers@3.8.1 --ignore-scripts)
//   node tests/models/tokenizer_ids_bert.mjs /tmp/tok/node_modules/@huggingface/transformers/dist/transformers.node.mjs
//
// writes tests/models/tiny-bert/tokenizer-cases.json: each text with its ids
// ([CLS] ... [SEP] included), which tests/test_hf_bert.cpp holds our tokenizer to.
import fs from "node:fs";
import path from "node:path";
import url from "node:url";

const here = path.dirname(url.fileURLToPath(import.meta.url));
const lib = await import(process.argv[2]);
const dir = path.join(here, "tiny-bert");
const tokenizerJson = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
const tokenizer = new lib.BertTokenizer(tokenizerJson, tokenizerConfig);

const texts = [
  "the ring fell",
  "The KING'S Rings FELL",                    // upper case, lower-cased; an apostrophe is punctuation
  "café naïve résumé Ærøskøbing Ångström",    // accents stripped (NFD, Mn removed); æ, ø have no decomposition
  "日本語のテキスト、中文。",                  // CJK ideographs spaced; kana are not; CJK punctuation split
  "emoji 🙂👍🏽 and ❤️ flags 🇫🇷",              // no piece for them: [UNK]; U+FE0F (Mn) stripped
  "12345 3.14159 1,000,000 ٣٤٥ ½",            // digits, punctuation inside numbers, other scripts' digits
  "a   b    c\t\td\n\n e  ",                    // runs of spaces, tabs, newlines: white space between words
  "hello!!! (ring) [fell] {a}; x-y_z @#$% ^&* `~|",  // every ASCII punctuation splits alone
  "playing played rolling ringer kingly unwanted",   // ## continuations, greedy longest first
  "zzzqqq xylophone qwertyuiop",             // letters only: spelt piece by piece with ##
  "the [MASK] fell [SEP] again",              // added tokens written in the text, taken whole
  "\u00a0nbsp\u2003em\u3000ideographic\u200bzero\u00adsoft",  // Unicode spaces become spaces; format chars (Cf) dropped
  "ctrl\u0007bell\u0000nul\ufffdrepl",        // controls, NUL and U+FFFD dropped
  "Ωmega ß straße ǅ ﬁ İstanbul",              // Greek, sharp s, a titlecase digraph, a ligature, dotted capital I
  "a".repeat(100) + " " + "b".repeat(101),    // 100 characters are a word; 101 are [UNK] (max_input_chars_per_word)
  "",                                         // nothing: [CLS] [SEP]
];
const cases = texts.map((text) => ({ text, ids: tokenizer.encode(text) }));
const out = {
  made_by: `tests/models/tokenizer_ids_bert.mjs with @huggingface/transformers ${lib.env?.version ?? ""} (BertTokenizer on tiny-bert/tokenizer.json)`,
  cases,
};
fs.writeFileSync(path.join(dir, "tokenizer-cases.json"), JSON.stringify(out, null, 1).replace(/\[\s*([0-9,\s]+?)\s*\]/g, (m, ids) => "[" + ids.replace(/\s+/g, "") + "]") + "\n");
console.log(cases.map((c) => `${JSON.stringify(c.text).slice(0, 60)}: ${c.ids.length} ids ${tokenizer.decode(c.ids).slice(0, 70)}`).join("\n"));
