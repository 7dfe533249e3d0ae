/**
 * Efí's sent Pix on the PSP's callback (CONTRACT §11.3): Efí posts a payout's outcome to the paying
 * key's webhook, the same URL as Pix received, as items with `gnExtras.idEnvio` (`tipo:
 * "SOLICITACAO"`). The payout port claims them: only an idEnvio of this installation is read back
 * (by idEnvio), and what Efí's own API says becomes the facts.
 */
import type { CallbackExtension } from '../api-pix/callback.ts';
import type { PayoutSender } from '../ports.ts';

export function sentPixCallback(payouts: PayoutSender): CallbackExtension {
  return {
    phase: 'sent',
    claims: (item) => item.gnExtras?.idEnvio !== undefined || item.tipo === 'SOLICITACAO',
    // Another installation's payout, or one nobody here sent: nothing of ours to learn.
    ids: (items) => [
      ...new Set(items.flatMap((i) => (i.gnExtras?.idEnvio && payouts.cashoutOf(i.gnExtras.idEnvio) !== null ? [i.gnExtras.idEnvio] : []))),
    ],
    async confirm(idEnvio, log) {
      try {
        // Null: Efí has no such sent Pix, whatever the body said.
        return (await payouts.sync(payouts.cashoutOf(idEnvio)!)) ?? [];
      } catch (error) {
        log.warn({ err: error, idEnvio }, 'PIX callback: Efí could not confirm this sent Pix');
        return null;
      }
    },
  };
}
