/**
 * The Efí payout connector (CONTRACT §11.3): a cashout's net amount sent as a Pix to the seller's
 * key with PUT /v3/gn/pix/{idEnvio}, idEnvio = installation id + cashout id, so a send repeated
 * after a crash or a lost answer can only meet the first (409) and read it. Every outcome is
 * confirmed by reading the sent Pix before it moves money; what Efí does not say for good (no
 * answer, 429, 5xx, its own balance short) leaves the cashout PENDING for the next round.
 */
import type { PixKeyType } from '../../domain/pix-keys.ts';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ApiPixError, valorFromCents } from '../api-pix/client/api-pix-client.ts';
import type { Account, PayoutAttempt, PayoutInput, PayoutSender } from '../ports.ts';
import { cashoutIdOf, factsOfSent, payoutIdEnvio, refusalFact } from './payout-facts.ts';
import type { EfiPixSendClient, PixSendBody } from './pix-send-client.ts';

export interface EfiPayoutConnector extends PayoutSender {
  client: EfiPixSendClient;
  payerKey: string;
  installationId: string;
}

// Refusals of the request itself (CONTRACT §11.3): the seller's key or the payout is wrong; sending again changes nothing.
const refusal_statuses = new Set([400, 404, 422]);
// Refused now for a reason of the platform's, not the seller's: the paying account's balance.
const platform_refusals = new Set(['saldo_insuficiente']);

function sendBody(payerKey: string, input: PayoutInput): PixSendBody {
  const favorecido: PixSendBody['favorecido'] = { chave: input.pixKey };
  if (input.pixKeyType === 'CPF') favorecido.cpf = input.pixKey;
  if (input.pixKeyType === 'CNPJ') favorecido.cnpj = input.pixKey;
  return { valor: valorFromCents(input.netCents), pagador: { chave: payerKey, infoPagador: `Saque ${input.cashoutId}` }, favorecido };
}

const words = (e: ApiPixError) => [e.problem?.nome, e.problem?.mensagem].filter(Boolean).join(': ') || `HTTP ${e.status}`;
const later = (e: unknown): PayoutAttempt => ({
  kind: 'later',
  retryAfterMs: e instanceof ApiPixError ? (e.retryAfterMs ?? null) : null,
  why: e instanceof Error ? e.message : String(e),
});

export function efiPayoutConnector(client: EfiPixSendClient, s: { payerKey: string; installationId: string }, account: Account): EfiPayoutConnector {
  const connector: EfiPayoutConnector = {
    capability: 'PAYOUT',
    account,
    client,
    payerKey: s.payerKey,
    installationId: s.installationId,
    cashoutOf: (idEnvio) => cashoutIdOf(s.installationId, idEnvio),
    async send(input) {
      const idEnvio = payoutIdEnvio(s.installationId, input.cashoutId);
      let refusedFor: string | null = null;
      try {
        await connector.client.sendPix(idEnvio, sendBody(s.payerKey, input));
      } catch (error) {
        const e = error instanceof ApiPixError ? error : null;
        const isRefusal = e?.kind === 'http' && refusal_statuses.has(e.status!) && !platform_refusals.has(e.problem?.nome ?? '');
        // 409: this idEnvio was sent before (a lost answer, a crash): what the read says is the outcome.
        if (!isRefusal && !(e?.kind === 'http' && e.status === 409)) return later(error);
        if (isRefusal) refusedFor = words(e!);
      }
      // Confirmed by reading it back, whatever the answer: the money moves on what Efí's records say.
      let facts: ProviderFact[] | null;
      try {
        facts = await connector.sync(input.cashoutId);
      } catch (error) {
        return later(error);
      }
      if (facts) return { kind: 'facts', facts };
      if (refusedFor !== null) return { kind: 'facts', facts: [refusalFact(idEnvio, input.cashoutId, input.netCents, refusedFor)] };
      return later(new Error(`Efí answered the send of ${idEnvio} but has no sent Pix of that id`));
    },
    async sync(cashoutId) {
      const idEnvio = payoutIdEnvio(s.installationId, cashoutId);
      try {
        return factsOfSent(await connector.client.getSent(idEnvio), cashoutId);
      } catch (error) {
        if (error instanceof ApiPixError && error.kind === 'http' && error.status === 404) return null;
        throw error;
      }
    },
  };
  return connector;
}

export type { PixKeyType };
