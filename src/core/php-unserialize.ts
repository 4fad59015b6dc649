// A strict reader for PHP's serialize() format, which interfaces B and C can answer in (docs/service.md §1.4).
// No library on the npm registry is both small and well kept for this, and the format is tiny.
// Lengths of strings are in bytes, so the reader works on a Buffer. Arrays become plain objects keyed
// as PHP keyed them (records under "0", "1", ...); `__proto__` keys are dropped.

const MAX_DEPTH = 64;

class PhpReader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  parse(): unknown {
    const value = this.value(0);
    if (this.pos !== this.buf.length) this.fail('trailing data');
    return value;
  }

  private fail(why: string): never {
    throw new SyntaxError(`PHP serialized data: ${why} at byte ${this.pos}`);
  }

  private expect(ch: string): void {
    if (this.buf[this.pos] !== ch.charCodeAt(0)) this.fail(`expected '${ch}'`);
    this.pos++;
  }

  private until(ch: string): string {
    const end = this.buf.indexOf(ch, this.pos);
    if (end < 0) this.fail(`missing '${ch}'`);
    const text = this.buf.toString('latin1', this.pos, end);
    this.pos = end + 1;
    return text;
  }

  private int(text: string): number {
    if (!/^-?\d{1,15}$/.test(text)) this.fail(`bad integer '${text.slice(0, 20)}'`);
    return Number(text);
  }

  private value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const tag = String.fromCharCode(this.buf[this.pos] ?? 0);
    this.pos++;
    if (tag === 'N') {
      this.expect(';');
      return null;
    }
    this.expect(':');
    switch (tag) {
      case 'b': {
        const v = this.until(';');
        if (v !== '0' && v !== '1') this.fail('bad boolean');
        return v === '1';
      }
      case 'i':
        return this.int(this.until(';'));
      case 'd': {
        const text = this.until(';');
        const v = Number(text);
        if (text === '' || Number.isNaN(v)) this.fail('bad float');
        return v;
      }
      case 's':
        return this.string();
      case 'a':
        return this.array(depth);
      case 'O': {
        this.int(this.until(':'));
        this.expect('"');
        this.until('"'); // the class name: objects are read as plain keyed data
        this.expect(':');
        return this.array(depth);
      }
      default:
        return this.fail(`unknown type '${tag}'`);
    }
  }

  private string(): string {
    const len = this.int(this.until(':'));
    this.expect('"');
    if (len < 0 || this.pos + len > this.buf.length) this.fail('string length past the end');
    const text = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    this.expect('"');
    this.expect(';');
    return text;
  }

  private array(depth: number): Record<string, unknown> {
    const count = this.int(this.until(':'));
    this.expect('{');
    const out: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const key = this.value(depth + 1);
      if (typeof key !== 'string' && typeof key !== 'number') this.fail('array key must be int or string');
      const value = this.value(depth + 1);
      if (key !== '__proto__') out[String(key)] = value;
    }
    this.expect('}');
    return out;
  }
}

export function phpUnserialize(text: string | Buffer): unknown {
  return new PhpReader(typeof text === 'string' ? Buffer.from(text, 'utf8') : text).parse();
}
