/**
 * Dates of the service's `YYYY-MM-DD HH:mm:SS` form (docs/service.md §3.3). Its time zone is not
 * documented; the simulator writes and reads these in UTC.
 */

const pad = (n: number): string => String(n).padStart(2, '0');

export function formatDateTime(epochMs: number): string {
  const d = new Date(epochMs);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const YMD = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const DMY = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * The inbox's "any date format" (docs/service.md §3.2), as epoch ms: unix seconds or ms, YYYY-MM-DD or DD-MM-YYYY
 * (separators - / .) with an optional time, or anything Date.parse reads (ISO 8601 with a zone).
 * A date without a time means the day's start, or its last millisecond when `endOfDay` (so todate is inclusive).
 */
export function parseDateParam(value: string, endOfDay: boolean): number | undefined {
  const v = value.trim();
  if (/^\d{9,10}$/.test(v)) return Number(v) * 1000;
  if (/^\d{12,13}$/.test(v)) return Number(v);
  const ymd = YMD.exec(v);
  const dmy = ymd ? undefined : DMY.exec(v);
  const parts = ymd
    ? [ymd[1], ymd[2], ymd[3], ymd[4], ymd[5], ymd[6]]
    : dmy
      ? [dmy[3], dmy[2], dmy[1], dmy[4], dmy[5], dmy[6]]
      : undefined;
  if (!parts) {
    const parsed = Date.parse(v);
    return Number.isNaN(parsed) ? undefined : parsed;
  }
  const [y, mo, d, h, mi, s] = parts.map((p) => (p === undefined ? undefined : Number(p)));
  const ms = Date.UTC(y!, mo! - 1, d!, h ?? 0, mi ?? 0, s ?? 0);
  const check = new Date(ms);
  if (check.getUTCMonth() !== mo! - 1 || check.getUTCDate() !== d! || (h ?? 0) > 23 || (mi ?? 0) > 59 || (s ?? 0) > 59) {
    return undefined;
  }
  if (h === undefined && endOfDay) return ms + 86_400_000 - 1;
  if (s === undefined && h !== undefined && endOfDay) return ms + 59_999;
  return ms;
}
