'use strict';
// A strict reader of Prometheus's text exposition format (0.0.4): every line is a HELP, a TYPE or a sample
// of a family declared before it; names and label names as the format allows, label values quoted with
// only \\, \" and \n escaped, values numbers (or +Inf, -Inf, NaN); a histogram's buckets cumulative and
// its +Inf bucket equal to its count. Throws on the first line that breaks a rule (no npm parser keeps a
// histogram's labels, sum and count: parse-prometheus-text-format drops them).

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const VALUE = '(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[-+]?Inf|NaN)';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL}="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (${VALUE})(?: -?\\d+)?$`);
const PAIR = new RegExp(`(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`, 'g');
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

const unescape = (v) => v.replace(/\\(["\\n])/g, (_, c) => (c === 'n' ? '\n' : c));

/** The families: { name: { help, type, samples: [{ name, labels, value }] } }. */
function parseExposition(text) {
  if (!text.endsWith('\n')) throw new Error('the text must end with a newline');
  const families = {};
  let current;
  const familyOf = (sample) => {
    for (const suffix of ['', '_bucket', '_sum', '_count']) {
      if (suffix && !sample.endsWith(suffix)) continue;
      const f = families[sample.slice(0, sample.length - suffix.length)];
      if (f && (suffix === '' ? f.type !== 'histogram' : f.type === 'histogram' || f.type === 'summary')) return f;
    }
    return undefined;
  };
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, i) => {
      const where = `line ${i + 1} (${JSON.stringify(line)})`;
      if (line === '') return;
      let m;
      if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
        if (families[m[1]]?.help !== undefined) throw new Error(`${where}: a second HELP`);
        families[m[1]] = current = { ...families[m[1]], help: m[2], samples: [] };
      } else if ((m = new RegExp(`^# TYPE (${NAME}) (\\S+)$`).exec(line))) {
        if (!TYPES.has(m[2])) throw new Error(`${where}: unknown type`);
        if (families[m[1]]?.type) throw new Error(`${where}: a second TYPE`);
        if (families[m[1]]?.samples?.length) throw new Error(`${where}: TYPE after samples`);
        families[m[1]] = current = { samples: [], ...families[m[1]], type: m[2] };
      } else if (line.startsWith('#')) {
        // a comment
      } else if ((m = SAMPLE.exec(line))) {
        const family = familyOf(m[1]);
        if (!family || family !== current) throw new Error(`${where}: a sample outside its family's block`);
        const labels = {};
        for (const [, k, v] of (m[2] ?? '').matchAll(PAIR)) {
          if (k in labels) throw new Error(`${where}: label ${k} twice`);
          labels[k] = unescape(v);
        }
        const value = m[3] === '+Inf' || m[3] === 'Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
        family.samples.push({ name: m[1], labels, value });
      } else throw new Error(`${where}: not in the exposition format`);
    });
  for (const [name, f] of Object.entries(families)) {
    if (!f.type) throw new Error(`${name}: no TYPE`);
    const seen = new Set();
    for (const s of f.samples) {
      const key = s.name + JSON.stringify(Object.entries(s.labels).sort());
      if (seen.has(key)) throw new Error(`${name}: the series ${key} twice`);
      seen.add(key);
    }
    if (f.type === 'histogram') checkHistogram(name, f);
  }
  return families;
}

function checkHistogram(name, f) {
  const series = new Map();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (!series.has(key)) series.set(key, { buckets: [], sum: undefined, count: undefined });
    const h = series.get(key);
    if (s.name === `${name}_bucket`) {
      if (le === undefined) throw new Error(`${name}: a bucket without le`);
      h.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
    } else if (s.name === `${name}_sum`) h.sum = s.value;
    else if (s.name === `${name}_count`) h.count = s.value;
    else throw new Error(`${name}: ${s.name} in a histogram`);
  }
  for (const [key, h] of series) {
    const sorted = [...h.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${name}${key}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${name}${key}: buckets not cumulative`);
    if (h.count !== sorted.at(-1)[1] || h.sum === undefined) throw new Error(`${name}${key}: count ${h.count} is not the +Inf bucket ${sorted.at(-1)[1]}, or no sum`);
  }
}

/** The value of the one sample of `family` (or its `sample` name) whose labels include `labels`; undefined if none. */
function valueOf(families, family, labels = {}, sample = family) {
  const f = families[family];
  if (!f) return undefined;
  const found = f.samples.filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${sample}${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

/** Every label value of every sample. */
function labelValues(families) {
  return Object.values(families).flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
}

module.exports = { parseExposition, valueOf, labelValues };
