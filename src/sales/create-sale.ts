import type { Queryable } from '../db/db.ts';
import { one, run, sql } from '../db/sql.ts';
import { cardFingerprint } from '../domain/card.ts';
import { type ProviderReference, reference_kept_ms } from '../domain/provider-reference.ts';
import { randomBytes } from '../domain/random.ts';
import { ok, type Result, refuse } from '../domain/result.ts';
import type { SaleRequest } from '../domain/sale-request.ts';
import type { Account, BoletoIssued, PixCharge, Providers } from '../providers/ports.ts';
import { qrPngDataUri } from '../qr/pix-qr.ts';
import type { SaleRow } from './sale-writes.ts';

export interface SaleDeps {
  providers: Providers;
  cardFingerprintKey: string;
}

/** A sale as written: its id, the request it came from and what the method added. */
export interface CreatedSale {
  id: number;
  sale: SaleRequest;
  createdAt: Date;
  installments: number | null;
  pix: { code: string; txid: string; expiresAt: Date | null; qrCodeBase64: string } | null;
  boleto: CreatedBoleto | null;
  /** 3-D Secure: the shopper's page and until when it can be used; null for a sale sent without `authentication`. */
  authentication: { token: string; expiresAt: Date } | null;
}

export interface CreatedBoleto {
  code: string;
  barcode: string;
  dueDate: string;
  pdfUrl: string | null;
  /** The boleto híbrido's Pix, when its issuer made one. */
  pix: { key: string; qrCodeBase64: string } | null;
}

/**
 * What a sale's provider made before the write, and the account that made it: a PIX charge, or a
 * registered boleto and the sale id it carries.
 */
export type Prepared =
  | { pix: PixCharge; boleto: null; account: Account }
  | { pix: null; boleto: { saleId: number; issued: BoletoIssued }; account: Account }
  | { pix: null; boleto: null; account: null };

interface MethodFields {
  id: number | null;
  account: Account;
  card: { brand: string; lastFour: string; bin: string; fingerprint: string } | null;
  pix: { code: string; txid: string; expiresAt: Date | null; charge: PixCharge['charge'] } | null;
  boleto: { code: string; barcode: string; dueDate: string; pdfUrl: string | null; pixCode: string | null } | null;
  /** null: the sale's own id. */
  externalId: string | null;
  providerData: Record<string, unknown> | null;
}

/**
 * What a sale's provider must make before the sale is written, outside any database transaction
 * (CONTRACT §11.1, §11.4): a PIX charge (with an expiry, a call to the PSP), or a boleto registered at
 * its issuer under a sale id drawn first. Nothing for cards; a refusal when the provider did not make
 * it (nothing is written then).
 */
/** `reference`: the key's claim's (http/idempotency-claim.ts), so a retry's charge is the first one's; null without a key. */
export async function prepareProvider(
  q: Queryable,
  deps: SaleDeps,
  sale: SaleRequest,
  reference: ProviderReference | null,
): Promise<Result<Prepared>> {
  if (sale.paymentMethod === 'BOLETO') return prepareBoleto(q, deps, sale, reference);
  if (sale.paymentMethod !== 'PIX') return ok({ pix: null, boleto: null, account: null });
  const document = sale.customer.document;
  const psp = deps.providers.rail('PIX');
  const charged = await psp.charge({
    amountCents: sale.amount,
    expiresInSeconds: sale.pix.expiresInSeconds,
    debtor: document ? { name: sale.customer.name, document } : null,
    reference: reference?.value ?? null,
  });
  if (!charged.ok) return refuse('PROVIDER_ERROR', charged.reason);
  // A charge made now lives from now: the PSP's clock speaks only for one an earlier attempt made.
  return ok({ pix: reference?.kept ? charged.charge : { ...charged.charge, madeAt: null }, boleto: null, account: psp.account });
}

async function prepareBoleto(
  q: Queryable,
  deps: SaleDeps,
  sale: Extract<SaleRequest, { paymentMethod: 'BOLETO' }>,
  reference: ProviderReference | null,
): Promise<Result<Prepared>> {
  // The issuer's charge carries the sale id: drawn before, written with the sale after.
  const saleId = await drawId(q);
  const issuer = deps.providers.rail('BOLETO');
  const issued = await issuer.issue({
    saleId,
    amountCents: sale.amount,
    dueDate: sale.boleto.dueDate,
    customer: { name: sale.customer.name, email: sale.customer.email, document: sale.customer.document ?? '', phone: sale.customer.phone },
    items: sale.items.map((i) => ({ title: i.title, unitPrice: i.unitPrice, quantity: i.quantity })),
    shipping: sale.shipping,
    reference,
  });
  return issued.ok ? ok({ pix: null, boleto: { saleId, issued: issued.boleto }, account: issuer.account }) : refuse('PROVIDER_ERROR', issued.reason);
}

/**
 * A sale (status PENDENTE) with what its provider made before (`prepareProvider`): its row, and the
 * sale as created once its id is known.
 */
export function plannedSale(
  deps: SaleDeps,
  sellerId: number,
  sale: SaleRequest,
  now: Date,
  prepared: Prepared,
): { row: SaleRow; created(id: number): CreatedSale } {
  const m = methodFields(deps, sale, now, prepared);
  const authentication = sale.authentication && { token: authenticationToken(), expiresAt: new Date(now.getTime() + authentication_ttl_ms) };
  return {
    row: saleRow(sellerId, sale, m, now, authentication),
    created: (id) => ({
      id,
      sale,
      createdAt: now,
      installments: sale.installments,
      pix: m.pix && { code: m.pix.code, txid: m.pix.txid, expiresAt: m.pix.expiresAt, qrCodeBase64: qrPngDataUri(m.pix.code) },
      boleto: m.boleto && {
        code: m.boleto.code,
        barcode: m.boleto.barcode,
        dueDate: m.boleto.dueDate,
        pdfUrl: m.boleto.pdfUrl,
        pix: m.boleto.pixCode === null ? null : { key: m.boleto.pixCode, qrCodeBase64: qrPngDataUri(m.boleto.pixCode) },
      },
      authentication,
    }),
  };
}

// CONTRACT §11.2: a shopper who has not come back from the issuer by then will not; the sale is cancelled.
const authentication_ttl_ms = 15 * 60_000;

/** The shopper's capability for the 3-D Secure pages: 192 random bits, URL-safe. */
const authenticationToken = () => randomBytes(24).toString('base64url');

// A registered boleto is read back from Efí this long after it is made (its notifications come first).
const first_boleto_check_ms = 5 * 60_000;

/** The sale's row, written by sale-writes.ts with its items; the fee schedule in force is snapshotted there. */
function saleRow(sellerId: number, sale: SaleRequest, m: MethodFields, now: Date, authentication: CreatedSale['authentication']): SaleRow {
  return {
    auth_token: authentication?.token ?? null,
    auth_return_url: sale.authentication?.returnUrl ?? null,
    auth_expires_at: authentication?.expiresAt ?? null,
    given_id: m.id,
    seller_id: sellerId,
    payment_method: sale.paymentMethod,
    amount: sale.amount,
    customer_name: sale.customer.name,
    customer_email: sale.customer.email,
    customer_document: sale.customer.document,
    customer_phone: sale.customer.phone,
    shipping: sale.shipping,
    postback_url: sale.postbackUrl,
    installments: sale.installments,
    card_brand: m.card?.brand ?? null,
    card_last_four: m.card?.lastFour ?? null,
    card_bin: m.card?.bin ?? null,
    card_fingerprint: m.card?.fingerprint ?? null,
    pix_code: m.pix?.code ?? null,
    pix_txid: m.pix?.txid ?? null,
    pix_expires_at: m.pix?.expiresAt ?? null,
    pix_charge: m.pix?.charge ?? null,
    boleto_code: m.boleto?.code ?? null,
    boleto_barcode: m.boleto?.barcode ?? null,
    boleto_due_date: m.boleto?.dueDate ?? null,
    boleto_pdf_url: m.boleto?.pdfUrl ?? null,
    boleto_pix_code: m.boleto?.pixCode ?? null,
    boleto_charge: m.boleto ? 'ACTIVE' : null,
    next_check_at: m.boleto ? new Date(now.getTime() + first_boleto_check_ms) : null,
    external_id: m.externalId,
    provider_data: m.providerData,
    provider: m.account.connector,
    account: m.account.id,
    at: now,
    items: sale.items.map((i) => ({ title: i.title, unit_price: i.unitPrice, quantity: i.quantity, tangible: i.tangible })),
  };
}

/**
 * When a charge stops taking payment. A charge asked for again under its key's reference was made by
 * an earlier attempt, so its life counts from the PSP's calendario.criacao (`madeAt`; null for a
 * charge made now). The PSP's clock only brings the expiry forward, and by no more than a reference
 * lives: a PSP whose clock is off cannot cut a sale short by more than that.
 */
export function chargeExpiry(now: Date, seconds: number, madeAt: Date | null): Date {
  const asked = now.getTime() + seconds * 1000;
  if (madeAt === null) return new Date(asked);
  return new Date(Math.min(asked, Math.max(asked - reference_kept_ms, madeAt.getTime() + seconds * 1000)));
}

/** The sale id, drawn before the write where the provider's reference carries it. */
const drawId = async (q: Queryable) => Number(one(await run<{ id: number }>(q, sql`SELECT nextval('transactions_id_seq') AS id`)).id);

function methodFields(deps: SaleDeps, sale: SaleRequest, now: Date, prepared: Prepared): MethodFields {
  const none = { id: null, card: null, pix: null, boleto: null, providerData: null };
  switch (sale.paymentMethod) {
    case 'PIX': {
      const charge = prepared.pix;
      if (!charge) throw new Error('a PIX sale is written with its charge (prepareProvider)');
      const seconds = sale.pix.expiresInSeconds;
      const expiresAt = seconds === null ? null : chargeExpiry(now, seconds, charge.madeAt);
      // CONTRACT §11.1: the transaction's externalTransactionId is the charge's txid.
      const pix = { code: charge.brCode, txid: charge.txid, expiresAt, charge: charge.charge };
      return { ...none, account: prepared.account!, pix, externalId: charge.txid };
    }
    case 'BOLETO': {
      if (!prepared.boleto) throw new Error('a boleto sale is written with its registered boleto (prepareProvider)');
      const { saleId, issued } = prepared.boleto;
      const boleto = {
        code: issued.digitableLine,
        barcode: issued.barcode,
        dueDate: sale.boleto.dueDate,
        pdfUrl: issued.pdfUrl,
        pixCode: issued.pixCode,
      };
      return { ...none, id: saleId, account: prepared.account!, boleto, externalId: issued.externalId };
    }
    case 'CREDIT_CARD':
    case 'DEBIT_CARD': {
      const { card } = sale;
      const processor = deps.providers.rail(sale.paymentMethod);
      // A processor that knows the payment by the sale id (CONTRACT §11.2) gets it from the write itself.
      const reference = processor.reference({
        amountCents: sale.amount,
        installments: sale.installments ?? 1,
        brand: card.brand,
        number: card.number,
      });
      return {
        ...none,
        account: processor.account,
        card: { brand: card.brand, lastFour: card.lastFour, bin: card.bin, fingerprint: cardFingerprint(card.number, deps.cardFingerprintKey) },
        externalId: reference.externalId,
        providerData: reference.providerData,
      };
    }
  }
}
