/**
 * Which reports a REPORT_AVAILABLE notification names that the gateway downloads (CONTRACT §15), and
 * the queue they wait in. Adyen sends the file name as the item's pspReference and the download URL
 * as its reason. Only Settlement details reports are taken, and only from Adyen's own hosts: the
 * report credentials are sent to that URL, so a URL elsewhere (however well signed the item) is refused.
 */
import type { Queryable } from '../../db/db.ts';
import { run, sql } from '../../db/sql.ts';
import type { Account } from '../ports.ts';
import { loopback_host } from './config.ts';

// Adyen's name for a batch's report: settlement_detail_report_batch_4.csv, or with a date its Support adds.
const settlement_file = /^settlement_detail_report_batch_[A-Za-z0-9_-]{1,64}\.csv$/;

export type ReportVerdict = { fetch: true; file: string; url: string } | { fetch: false; why: string };

/** Whether the report `file` at `url` is one to download; `checkoutUrl` tells a test double on this machine. */
export function reportVerdict(file: string, url: string | undefined, checkoutUrl: string): ReportVerdict {
  if (!settlement_file.test(file)) return { fetch: false, why: 'not a Settlement details report' };
  if (url === undefined || !URL.canParse(url)) return { fetch: false, why: 'no download URL' };
  const u = new URL(url);
  if (u.username !== '' || u.password !== '') return { fetch: false, why: 'the URL carries credentials' };
  if (!adyenHost(u, new URL(checkoutUrl))) return { fetch: false, why: `${u.protocol}//${u.host} is not an Adyen host` };
  const last = u.pathname.slice(u.pathname.lastIndexOf('/') + 1);
  if (safeDecode(last) !== file) return { fetch: false, why: 'the URL does not name the report' };
  return { fetch: true, file, url: u.href };
}

/** https on adyen.com (ca-live.adyen.com, ca-test.adyen.com…); or the host of a test double the checkout URL names on this machine. */
function adyenHost(u: URL, checkout: URL): boolean {
  if (u.protocol === 'https:' && (u.hostname === 'adyen.com' || u.hostname.endsWith('.adyen.com'))) return true;
  return loopback_host.test(checkout.hostname) && u.hostname === checkout.hostname && (u.protocol === 'http:' || u.protocol === 'https:');
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** Where the notifications endpoint puts a report to download. */
export interface ReportInbox {
  /** Queues the report once (a repeated notification of the same URL changes nothing). */
  queue(file: string, url: string): Promise<void>;
}

export function adyenReportInbox(db: Queryable, account: Account): ReportInbox {
  return {
    async queue(file, url) {
      await run(
        db,
        sql`INSERT INTO settlement_reports (account, url, file_name) VALUES (${account.id}, ${url}, ${file}) ON CONFLICT (url) DO NOTHING`,
      );
    },
  };
}
