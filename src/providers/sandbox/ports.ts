/**
 * The sandbox mode (CONTRACT §6, §11): the embedded PSP is reached through the real connectors,
 * which cannot tell it from a PSP; where a real PSP would leave money to the operator, the sandbox's
 * bank stands for the payer. A PIX sale paid by an operator event has no Pix to return, and a paid
 * boleto no API refund: in the sandbox both are refunded at once. Its levers (a payer's bank paying
 * a charge or a boleto) exist only while the rail they play is the sandbox's.
 */
import type { BoletoIssuer, PixPsp } from '../ports.ts';
import type { SandboxPsp } from './embedded-psp.ts';

/** The PIX port of the embedded PSP's account: the API Pix connector's, but for the refund of a sale no Pix paid. */
export function sandboxPixPsp(psp: PixPsp): PixPsp {
  // Each call goes to `psp` as it is then (a test may stand in for one of its methods).
  return {
    capability: 'PIX',
    account: psp.account,
    charge: (input) => psp.charge(input),
    removeCharge: (txid) => psp.removeCharge(txid),
    refund: (input) => (input.pixEndToEndId === null ? Promise.resolve({ status: 'SUCCEEDED' }) : psp.refund(input)),
    giveBack: (payment) => psp.giveBack(payment),
    sync: (endToEndId) => psp.sync(endToEndId),
    record: (window) => psp.record(window),
    devolucoesOf: (ids) => psp.devolucoesOf(ids),
  };
}

/** The boleto port of the embedded PSP's account: the Efí connector's, with the sandbox bank's refund. */
export function sandboxBoletoIssuer(issuer: BoletoIssuer): BoletoIssuer {
  return {
    capability: 'BOLETO',
    account: issuer.account,
    issue: (input) => issuer.issue(input),
    cancel: (chargeId) => issuer.cancel(chargeId),
    refund: async () => ({ status: 'SUCCEEDED' }),
    sync: (chargeId) => issuer.sync(chargeId),
    record: issuer.record,
  };
}

/** What the /sandbox routes may do: a payer's bank paying a charge (PIX rail sandbox) or a boleto (boleto rail sandbox). */
export interface SandboxLevers {
  pix: { pay(txid: string, amountCents: number): Promise<{ endToEndId: string; valor: string; horario: string }> } | null;
  boleto: { pay(chargeId: number, amountCents?: number): Promise<void> } | null;
  /** The payer's bank contesting a Pix, and the BCB deciding (PIX rail sandbox, its infractions read: CONTRACT §11.5). */
  med: {
    open(endToEndId: string): Promise<{ idInfracao: string }>;
    resolve(idInfracao: string, status: 'ACEITA' | 'REJEITADA'): Promise<void>;
    /** The PIX port whose infractions the gateway reads. */
    port: PixPsp;
  } | null;
  /** The accounts the sandbox plays: only their sales may be paid through it. */
  accounts: string[];
}

export function sandboxLevers(psp: SandboxPsp | null, plays: { pix: PixPsp | null; boleto: BoletoIssuer | null }): SandboxLevers {
  return {
    pix: psp && plays.pix ? { pay: (txid, amountCents) => psp.pay(txid, amountCents) } : null,
    boleto: psp && plays.boleto ? { pay: (chargeId, amountCents) => psp.payBoleto(chargeId, amountCents) } : null,
    med:
      psp && plays.pix?.infractions
        ? { open: (e2e) => psp.openInfraction(e2e), resolve: (id, status) => psp.resolveInfraction(id, status), port: plays.pix }
        : null,
    accounts: [plays.pix?.account.id, plays.boleto?.account.id].filter((a): a is string => a !== undefined),
  };
}
