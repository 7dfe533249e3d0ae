/**
 * The Efí boleto connector (CONTRACT §11.4): a boleto sale registered as a one-step charge (with the
 * Pix of a boleto híbrido when Efí makes one), cancelled at Efí when the sale can no longer be paid,
 * and read back to reconcile. The linha digitável Efí answers is checked (FEBRABAN check digits)
 * before a sale is written with it.
 */
import { parseDigitableLine } from '../../domain/boleto.ts';
import { saoPauloDate } from '../../domain/calendar.ts';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ApiPixError } from '../api-pix/client/api-pix-client.ts';
import type { Account, BoletoInput, BoletoIssuer, CancelOutcome } from '../ports.ts';
import { boletoCustomId, factOfChange } from './boleto-facts.ts';
import type { ChargeIssued, EfiChargesClient, OneStepChargeBody } from './charges-client.ts';

export interface EfiBoletoSettings {
  installationId: string;
  clock: { now(): Date };
  /** Where Efí posts a charge's notifications; null until this process knows (then reconciliation alone tells). */
  notificationUrl(): string | null;
}

export type EfiBoletoConnector = BoletoIssuer & { charges: EfiChargesClient };

function customer(c: BoletoInput['customer'], address: OneStepChargeBody['payment']['banking_billet']['customer']['address']) {
  const digits = c.document.replace(/[^0-9A-Z]/gi, '').toUpperCase();
  const who: OneStepChargeBody['payment']['banking_billet']['customer'] =
    digits.length === 14 ? { juridical_person: { corporate_name: c.name, cnpj: digits } } : { name: c.name, cpf: digits };
  who.email = c.email;
  if (c.phone) who.phone_number = c.phone;
  if (address) who.address = address;
  return who;
}

export function chargeBody(input: BoletoInput, s: EfiBoletoSettings): OneStepChargeBody {
  const ship = input.shipping;
  const url = s.notificationUrl();
  const address = ship
    ? {
        street: ship.street,
        number: ship.number,
        neighborhood: ship.neighborhood,
        zipcode: ship.zipCode,
        city: ship.city,
        state: ship.state,
        complement: ship.complement,
      }
    : undefined;
  return {
    items: input.items.map((i) => ({ name: i.title, value: i.unitPrice, amount: i.quantity })),
    ...(ship && ship.fee > 0 ? { shippings: [{ name: 'Frete', value: ship.fee }] } : {}),
    metadata: {
      custom_id: boletoCustomId(s.installationId, input.saleId, input.reference?.value ?? null),
      ...(url === null ? {} : { notification_url: url }),
    },
    payment: { banking_billet: { customer: customer(input.customer, address), expire_at: input.dueDate } },
  };
}

const words = (e: unknown) =>
  e instanceof ApiPixError
    ? [e.problem?.nome, e.problem?.mensagem].filter(Boolean).join(': ') || e.reason
    : e instanceof Error
      ? e.message
      : String(e);

const day_ms = 86_400_000;

/**
 * The boleto an earlier attempt under the key registered with its reference, if it got that far.
 * Efí registers every one-step charge it is sent, so this is asked first; the reference is at most
 * 30 s old, so its boleto was made today or, just past midnight, yesterday. Only one for this sale's
 * amount and due date is its (a default due date counts from the day of the request).
 */
async function registeredBefore(charges: EfiChargesClient, s: EfiBoletoSettings, input: BoletoInput, customId: string): Promise<ChargeIssued | null> {
  const now = s.clock.now();
  const days = { from: saoPauloDate(new Date(now.getTime() - day_ms)), to: saoPauloDate(now) };
  const found = (await charges.boletosOf(customId, days)).filter(
    (c) => c.customId === customId && c.total === input.amountCents && c.expireAt === input.dueDate,
  );
  return found.find((c) => c.status === 'waiting') ?? found[0] ?? null;
}

export function efiBoletoConnector(client: EfiChargesClient, s: EfiBoletoSettings, account: Account): EfiBoletoConnector {
  // Every call through `connector.charges`: a test may wrap the client to check what is sent.
  const connector: EfiBoletoConnector = {
    capability: 'BOLETO',
    account,
    charges: client,
    async issue(input) {
      let issued: ChargeIssued;
      try {
        const body = chargeBody(input, s);
        const before = input.reference?.kept ? await registeredBefore(connector.charges, s, input, body.metadata.custom_id) : null;
        // Only a payable boleto may be sold.
        if (before && before.status !== 'waiting')
          return { ok: false, reason: `Efí holds this boleto (charge ${before.chargeId}) as ${before.status}` };
        issued = before ?? (await connector.charges.createOneStep(body));
      } catch (error) {
        return { ok: false, reason: `Efí did not register the boleto: ${words(error)}` };
      }
      const line = parseDigitableLine(issued.barcode);
      // Never a code a bank would refuse, or one for another amount, on a sale; the charge made is withdrawn.
      const wrong = !line.ok
        ? `a linha digitável that fails: ${line.refusal.message}`
        : line.value.amountCents !== input.amountCents && line.value.amountCents !== 0
          ? `a boleto of ${line.value.amountCents} cents`
          : null;
      if (!line.ok || wrong !== null) {
        await connector.charges.cancel(issued.chargeId).catch(() => {});
        return { ok: false, reason: `Efí answered charge ${issued.chargeId} with ${wrong}` };
      }
      const { digitableLine, barcode } = line.value;
      return { ok: true, boleto: { externalId: String(issued.chargeId), digitableLine, barcode, pdfUrl: issued.pdfUrl, pixCode: issued.pixCode } };
    },
    async sync(chargeId) {
      const detail = await connector.charges.detail(Number(chargeId));
      const change = {
        id: null,
        chargeId: detail.chargeId,
        customId: detail.customId,
        status: detail.status,
        value: detail.paidValue ?? detail.total,
        at: '',
      };
      return [factOfChange(change, s.installationId)] satisfies ProviderFact[];
    },
    // A paid boleto's money goes back by bank transfer from the Efí account, not by its API: the refund
    // fails, the seller keeps the balance, and the operator returns it by hand (then the event REFUNDED).
    refund: async () => ({ status: 'FAILED', reason: 'Efí returns no boleto payment by API: the operator returns it from the Efí account' }),
    async cancel(chargeId): Promise<CancelOutcome> {
      try {
        await connector.charges.cancel(Number(chargeId));
        return { status: 'DONE', detail: null };
      } catch (error) {
        // Refused for good (paid or cancelled already): nothing left to cancel; the notification says what happened.
        if (error instanceof ApiPixError && error.kind === 'http' && error.status! < 500 && error.status !== 429)
          return { status: 'REFUSED', detail: words(error) };
        throw error;
      }
    },
  };
  return connector;
}
