'use strict';
// The editor's languages: every catalog (the seven node types' and the sidebar's) of every language has exactly the en-US keys (no key missing,
// none extra), keeps its substitution tokens and the palette labels, and every help file has the same
// sections and the same structure (headings, property lists, code) as the en-US one. The browser test
// opens a dialog in Japanese.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const LOCALES = path.join(__dirname, '..', 'nodes', 'locales');
const LANGS = ['de', 'es-ES', 'fr', 'ja', 'pt-BR', 'zh-CN'];
const files = fs.readdirSync(path.join(LOCALES, 'en-US')).sort();

/** Every key path of a catalog, with its value. */
function leaves(obj, prefix = '') {
  return Object.entries(obj).flatMap(([k, v]) => (v && typeof v === 'object' ? leaves(v, `${prefix}${k}.`) : [[`${prefix}${k}`, v]]));
}

/** Substitution tokens a translation must keep: __name__ and {{name}}. */
const tokens = (text) => (String(text).match(/__\w+__|\{\{\w+\}\}/g) ?? []).sort();

/**
 * Values a catalog may keep as en-US has them. Any language: names and codes only (kaleyra, VMN, WhatsApp,
 * Redis, URL), example addresses (URLs, paths), tokens, digits and punctuation. Per language, words that are
 * that language's own word too, or a term its translation keeps (API key in ja, pt-BR and zh-CN, as in its
 * sentences).
 */
const NAMES_AND_CODES = /^(?:kaleyra|VMN|WhatsApp|Redis|URL|__\w+__|\{\{\w+\}\}|[a-z]+:\/\/\S*|\/\S*|[\s\d\p{P}\p{S}])*$/u;
const SAME_AS_ENGLISH = {
  de: ['Name', 'Token', 'Meta', 'Callback', 'Limits', 'Timeout'],
  'es-ES': ['Token', 'Meta', 'Callback'],
  fr: ['Mobile', 'minutes', 'Page', 'message', 'Callback'],
  'pt-BR': ['Token', 'Meta', 'Callback', 'API key'],
  ja: ['API key'],
  'zh-CN': ['API key'],
};

/** The structure of a help file: its elements in order (headings, lists, terms) and its code, as text. */
function structure(html) {
  const name = /data-help-name="([^"]+)"/.exec(html)?.[1];
  const tags = [...html.matchAll(/<(h3|h4|dl|dt|dd|ul|li|pre)\b/g)].map((m) => m[1]);
  const code = [...html.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => m[1].replace(/\s+/g, ' ')).sort();
  return { name, tags, code };
}

describe("the editor's languages", () => {
  it('en-US has a catalog and a help file for each of the seven node types, and a catalog for the sidebar', () => {
    assert.equal(files.filter((f) => f.endsWith('.json')).length, 8);
    assert.equal(files.filter((f) => f.endsWith('.html')).length, 7);
    assert.ok(files.includes('kaleyra-sidebar.json'));
  });

  for (const lang of LANGS) {
    describe(lang, () => {
      it('has every file of en-US, and no other', () => {
        assert.deepEqual(fs.readdirSync(path.join(LOCALES, lang)).sort(), files);
      });

      const kept = new Set();
      for (const file of files.filter((f) => f.endsWith('.json'))) {
        it(`${file}: exactly the en-US keys; tokens and palette labels kept; every value translated text`, () => {
          const en = leaves(JSON.parse(fs.readFileSync(path.join(LOCALES, 'en-US', file), 'utf8')));
          const tr = new Map(leaves(JSON.parse(fs.readFileSync(path.join(LOCALES, lang, file), 'utf8'))));
          assert.deepEqual([...tr.keys()].sort(), en.map(([k]) => k).sort());
          const untranslated = [];
          for (const [key, value] of en) {
            const t = tr.get(key);
            assert.equal(typeof t, typeof value, `${key}: a ${typeof value}`);
            assert.deepEqual(tokens(t), tokens(value), `${key}: the substitution tokens of "${value}"`);
            if (key.endsWith('paletteLabel')) assert.equal(t, value, 'palette labels are the node names, in every language');
            else if (typeof value === 'string' && t === value && !NAMES_AND_CODES.test(value)) {
              if (SAME_AS_ENGLISH[lang].includes(value)) kept.add(value);
              else untranslated.push(`${key}: "${value}"`);
            }
            if (typeof value === 'string' && value.trim()) assert.ok(t.trim(), `${key}: not empty`);
          }
          assert.deepEqual(untranslated, [], 'values left as in en-US');
        });
      }

      it('every value it may keep as in en-US is one it keeps (the list is not stale)', () => {
        assert.deepEqual(SAME_AS_ENGLISH[lang].filter((v) => !kept.has(v)), []);
      });

      for (const file of files.filter((f) => f.endsWith('.html'))) {
        it(`${file}: the same sections, property lists and code as en-US`, () => {
          const en = structure(fs.readFileSync(path.join(LOCALES, 'en-US', file), 'utf8'));
          const tr = structure(fs.readFileSync(path.join(LOCALES, lang, file), 'utf8'));
          assert.equal(tr.name, en.name);
          assert.deepEqual(tr.tags, en.tags);
          assert.deepEqual(tr.code, en.code);
        });
      }
    });
  }
});
