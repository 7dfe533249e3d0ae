/**
 * The accounts reconciliation reads (CONTRACT §15): every configured account, with the readers of
 * each port it serves (an Efí account sends payouts and issues boletos: both are its record).
 */
import type { Account, Providers } from '../providers/ports.ts';
import type { AccountRecord } from './reconcile.ts';

export function accountRecords(providers: Providers): AccountRecord[] {
  const records = new Map<string, AccountRecord>();
  const of = (account: Account): AccountRecord => {
    let rec = records.get(account.id);
    if (!rec) {
      rec = { account, readers: [], lateByMs: 0 };
      records.set(account.id, rec);
    }
    return rec;
  };
  for (const psp of providers.all('PIX')) {
    const rec = of(psp.account);
    rec.readers.push(psp.record);
    rec.devolucoesOf = (ids) => psp.devolucoesOf(ids);
  }
  for (const processor of providers.all('CARD')) {
    const rec = of(processor.account);
    if (processor.record) rec.readers.push(processor.record);
    rec.lateByMs = Math.max(rec.lateByMs, processor.settlesWithinMs ?? 0);
  }
  for (const issuer of providers.all('BOLETO')) if (issuer.record) of(issuer.account).readers.push(issuer.record);
  for (const sender of providers.all('PAYOUT')) {
    const rec = of(sender.account);
    if (sender.record) rec.readers.push(sender.record);
    if (sender.balance) rec.balance = () => sender.balance?.() ?? Promise.resolve(null);
  }
  return [...records.values()].filter((r) => r.readers.length > 0);
}
