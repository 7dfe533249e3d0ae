/**
 * The POST /api/sales examples of the OpenAPI document (CONTRACT §4's, and one per method): the
 * sandbox accepts each (test/integration/openapi.test.ts). Cards are the sandbox's test cards; the
 * CPF's check digits are valid; the shopper's IP is a documentation address (RFC 5737).
 */
import type { BodyExample } from '../http/openapi.ts';

const customer = { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' };
const course = { title: 'Curso de fotografia', unitPrice: 15000, quantity: 1, tangible: false };
const card = (number: string) => ({ number, holderName: 'MARIA SILVA', expirationMonth: 12, expirationYear: 2030, cvv: '123' });

export const saleExamples: Record<string, BodyExample> = {
  pix: {
    summary: 'PIX, a dynamic BR Code that expires in an hour',
    value: {
      amount: 15000,
      paymentMethod: 'PIX',
      customer,
      items: [course],
      postbackUrl: 'https://loja.example.com/postbacks/pagamentos',
      pix: { expiresInSeconds: 3600 },
    },
  },
  pixWithoutExpiry: {
    summary: 'PIX, a static BR Code that does not expire',
    value: {
      amount: 15000,
      paymentMethod: 'PIX',
      customer: { name: 'Maria Silva', email: 'maria@example.com' },
      items: [course],
      pix: { expiresInSeconds: null },
    },
  },
  boleto: {
    summary: 'Boleto: the customer document is required',
    value: {
      amount: 25990,
      paymentMethod: 'BOLETO',
      customer,
      items: [
        { title: 'Assinatura anual', unitPrice: 19990, quantity: 1, tangible: false },
        { title: 'Taxa de adesão', unitPrice: 3000, quantity: 2, tangible: false },
      ],
      boleto: { dueDate: '2030-12-20' },
    },
  },
  creditCard: {
    summary: 'Credit card in 3 instalments, a physical product with shipping',
    description: 'amount = 15000 (the item) + 1000 (shipping.fee); the sandbox approves 4111111111111111',
    value: {
      amount: 16000,
      paymentMethod: 'CREDIT_CARD',
      customer: { name: 'Maria Silva', email: 'maria@example.com' },
      items: [{ title: 'Camiseta', unitPrice: 15000, quantity: 1, tangible: true }],
      installments: 3,
      card: card('4111111111111111'),
      shipping: {
        street: 'Rua A',
        number: '10',
        complement: null,
        neighborhood: 'Centro',
        city: 'São Paulo',
        state: 'SP',
        zipCode: '01001000',
        fee: 1000,
      },
    },
  },
  debitCard: {
    summary: 'Debit card (Mastercard) with 3-D Secure, a digital product',
    description: [
      "Debit requires `authentication`: the shopper's browser as its page reads it (the SDK's `browserInfo()`), its IP as the seller's server sees it, and the seller's page it comes back to.",
      'The answer carries where the shopper goes next:',
      '`"card": { "authentication": { "status": "REQUIRED", "url": "http://127.0.0.1:3000/checkout/3ds/{token}", "expiresAt": "…15 minutes after createdAt…" } }`',
      'under `sale.payment`. Send the browser to `url`; it comes back to `returnUrl` with `saleId` and `status` in the query (the sandbox issuer fails every card ending in 0002).',
    ].join(' '),
    value: {
      amount: 4990,
      paymentMethod: 'DEBIT_CARD',
      customer: { name: 'João Souza', email: 'joao@example.com', phone: '2133334444' },
      items: [{ title: 'E-book', unitPrice: 4990, quantity: 1, tangible: false }],
      card: card('5555555555554444'),
      authentication: {
        returnUrl: 'https://loja.example.com/pedido/retorno?pedido=1042',
        browser: {
          userAgent:
            'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
          acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          language: 'pt-BR',
          colorDepth: 24,
          screenHeight: 844,
          screenWidth: 390,
          timeZoneOffset: 180,
          javaEnabled: false,
        },
        ip: '203.0.113.7',
      },
    },
  },
  creditCardDeclined: {
    summary: 'Credit card the sandbox declines',
    description: 'Created PENDENTE like any sale; the sandbox processor then moves it to RECUSADO',
    value: {
      amount: 9900,
      paymentMethod: 'CREDIT_CARD',
      customer: { name: 'Maria Silva', email: 'maria@example.com' },
      items: [{ title: 'Curso online', unitPrice: 9900, quantity: 1, tangible: false }],
      card: card('4000000000000002'),
    },
  },
};
