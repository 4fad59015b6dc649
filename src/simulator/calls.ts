/** Interface C, outbound call status (docs/service.md §4): the simulator's call records and their lookup. */
import { formatDateTime, nowSeconds } from './dates';
import { sameNumber } from './inbox';
import { rejection, type Reply } from './reply';
import type { CallInput, CallRecord } from './types';

export class CallLog {
  private records: CallRecord[] = [];
  private sequence = 100;

  constructor(private readonly maxRecords: number) {}

  get all(): CallRecord[] {
    return this.records;
  }

  clear(): void {
    this.records = [];
  }

  /**
   * Without an id, the call gets one shaped like the service's ("numeric with symbols"):
   * `<unix seconds>.<sequence>-1`, the part before `-1` being its group.
   */
  add(input: CallInput): CallRecord {
    if (!input.mobile || typeof input.mobile !== 'string') throw new TypeError('mobile is required');
    const record: CallRecord = {
      id: input.id || `${nowSeconds()}.${this.sequence++}-1`,
      mobile: input.mobile,
      status: input.status || 'COMPLETED',
      senttime: input.senttime || formatDateTime(Date.now()),
    };
    this.records.push(record);
    if (this.records.length > this.maxRecords) this.records.splice(0, this.records.length - this.maxRecords);
    return record;
  }

  /**
   * voice.status: the record with this id. voice.groupStatus: every record whose id is the given id or
   * continues it after a separator (`-`, `.`, `_`), so group `1700000000.101` holds `…101-1`, `…101-2`
   * but not `…1010-1`. An optional mobile must match too. Nothing found, or no id: A416.
   */
  lookup(params: Record<string, string>, group: boolean): Reply {
    const id = params.id?.trim();
    const mobile = params.mobile?.trim();
    const matches = id
      ? this.records.filter(
          (r) => (r.id === id || (group && r.id.startsWith(id) && /^[-._]/.test(r.id.slice(id.length)))) && (!mobile || sameNumber(r.mobile, mobile)),
        )
      : [];
    if (matches.length === 0) throw rejection('A416', 'invalid call id / mobile');
    const data = Object.fromEntries(matches.map((r, i) => [String(i), { ...r }]));
    return { status: '200', message: 'OK', data, xmlData: { voice: matches } };
  }
}
