import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config.ts';
import { eventsToPaid, planSaleFact, type SaleSnapshot } from '../../src/domain/fact-plans.ts';
import { loadCardRailConfig } from '../../src/providers/adyen/config.ts';
import { notificationHmac, validNotificationHmac } from '../../src/providers/adyen/hmac.ts';
import { actionOf, type NotificationItem } from '../../src/providers/adyen/notification-facts.ts';
import { paymentRequest, paymentVerdict, shopperAction } from '../../src/providers/adyen/payment-request.ts';
import { checkAdyenRequest } from '../helpers/adyen-spec.ts';

// Adyen's own published vector (adyen-php-api-library, tests/Adyen/Util/HmacSignatureTest.php).
const adyen_key = Buffer.from('DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00', 'hex');
const adyen_item = {
  pspReference: '7914073381342284',
  merchantAccountCode: 'TestMerchant',
  merchantReference: 'TestPayment-1407325143704',
  amount: { value: 1130, currency: 'EUR' },
  eventCode: 'AUTHORISATION',
  success: 'true',
};

test("notification HMAC: Adyen's published vector, and any changed field or key refused", () => {
  assert.equal(notificationHmac(adyen_item, adyen_key), 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=');
  assert.ok(validNotificationHmac(adyen_item, 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=', adyen_key));
  assert.ok(
    !validNotificationHmac({ ...adyen_item, amount: { value: 1131, currency: 'EUR' } }, 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=', adyen_key),
  );
  assert.ok(!validNotificationHmac({ ...adyen_item, success: 'false' }, 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=', adyen_key));
  assert.ok(!validNotificationHmac(adyen_item, 'Ny9gS2veKo5E4w8/OL6xz1/wvT/hYkAXy1xNc/QvO4I=', Buffer.alloc(32)));
  assert.ok(!validNotificationHmac(adyen_item, undefined, adyen_key));
  assert.ok(!validNotificationHmac(adyen_item, '', adyen_key));
});

const item = (eventCode: string, success: 'true' | 'false' = 'true', additionalData?: Record<string, string>): NotificationItem => ({
  eventCode,
  success,
  pspReference: 'PSP',
  merchantReference: '1',
  merchantAccountCode: 'M',
  amount: { value: 100, currency: 'BRL' },
  ...(additionalData ? { additionalData } : {}),
});

test('event codes map onto CONTRACT §6 as the table in docs/cards.md says', () => {
  assert.deepEqual(actionOf(item('AUTHORISATION')), { kind: 'authorisation', authorised: true });
  assert.deepEqual(actionOf(item('AUTHORISATION', 'false')), { kind: 'authorisation', authorised: false });
  assert.deepEqual(actionOf(item('CAPTURE')), { kind: 'capture', captured: true });
  assert.deepEqual(actionOf(item('CAPTURE_FAILED')), { kind: 'capture', captured: false });
  assert.deepEqual(actionOf(item('CANCELLATION')), { kind: 'cancellation' });
  assert.deepEqual(actionOf(item('REFUND')), { kind: 'refund', outcome: { status: 'SUCCEEDED' } });
  assert.equal(actionOf(item('REFUND', 'false')).kind, 'refund');
  assert.equal((actionOf(item('REFUND_FAILED')) as { outcome: { status: string } }).outcome.status, 'FAILED');
  assert.deepEqual(actionOf(item('NOTIFICATION_OF_CHARGEBACK')), { kind: 'dispute', step: 'opened' });
  assert.deepEqual(actionOf(item('CHARGEBACK')), { kind: 'dispute', step: 'opened' });
  assert.deepEqual(actionOf(item('CHARGEBACK', 'true', { disputeStatus: 'Lost' })), { kind: 'dispute', step: 'lost' });
  assert.deepEqual(actionOf(item('CHARGEBACK', 'true', { disputeStatus: 'Accepted' })), { kind: 'dispute', step: 'lost' });
  assert.deepEqual(actionOf(item('CHARGEBACK_REVERSED')), { kind: 'dispute', step: 'reversed' });
  assert.deepEqual(actionOf(item('SECOND_CHARGEBACK')), { kind: 'dispute', step: 'lost' });
  assert.deepEqual(actionOf(item('PREARBITRATION_LOST')), { kind: 'dispute', step: 'lost' });
  assert.equal(actionOf(item('REPORT_AVAILABLE')).kind, 'ignore');
});

test('resultCode → moves of the PENDENTE sale; authorised money reaches PAGO from where it can', () => {
  // The answer is a fact (CARD_ANSWER), planned on the PENDENTE sale by the one apply step.
  const pendente: SaleSnapshot = {
    id: 1,
    status: 'PENDENTE',
    paymentMethod: 'CREDIT_CARD',
    lastEvent: null,
    amount: 1000,
    refundPending: false,
    captureAsked: false,
    paidBy: null,
  };
  const moves = (resultCode: string | undefined) => {
    const verdict = paymentVerdict(resultCode);
    const fact = {
      kind: 'CARD_ANSWER' as const,
      sale: { ids: [], saleId: 1, referenceSuffices: true },
      paymentId: 'P',
      result: verdict.result === 'SHOPPER' ? ('ERROR' as const) : verdict.result,
    };
    return { ...verdict, events: planSaleFact({ ...fact, captureByGateway: false, data: {} }, pendente).events };
  };
  assert.deepEqual(moves('Authorised'), { events: ['SENT_TO_PROCESSOR'], result: 'AUTHORISED', cancel: false });
  assert.deepEqual(moves('Refused').events, ['SENT_TO_PROCESSOR', 'DECLINED']);
  assert.deepEqual(moves('Error').events, ['PROCESSING_ERROR']);
  assert.deepEqual(moves('Received').events, ['SENT_TO_PROCESSOR']);
  assert.deepEqual(moves('RedirectShopper'), { events: ['PROCESSING_ERROR'], result: 'ERROR', cancel: true });
  assert.deepEqual(paymentVerdict(undefined).cancel, true);
  assert.deepEqual(eventsToPaid('PENDENTE'), ['SENT_TO_PROCESSOR', 'APPROVED']);
  assert.deepEqual(eventsToPaid('FALHA'), ['RETRY_PROCESSED']);
  assert.deepEqual(eventsToPaid('PAGO'), []);
  assert.equal(eventsToPaid('CANCELADO'), null);
  assert.equal(eventsToPaid('RECUSADO'), null);
});

test('the /payments body passes the official Checkout file, with shopper data, shipping and installments', () => {
  const body = paymentRequest(
    { merchantAccount: 'LojaBR', capture: 'manual', returnUrl: 'https://gateway.invalid/adyen/return' },
    {
      saleId: 42,
      amountCents: 16000,
      method: 'CREDIT_CARD',
      installments: 3,
      card: { number: '4111111111111111', holderName: 'MARIA SILVA', expirationMonth: 3, expirationYear: 2030, cvv: '737', brand: 'VISA' },
      customer: { name: 'Maria da Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' },
      shipping: { street: 'Rua A', number: '10', city: 'São Paulo', state: 'SP', zipCode: '01001000' },
      authentication: null,
    },
  );
  assert.deepEqual(checkAdyenRequest({ method: 'POST', path: '/payments', body }), []);
  assert.equal(body.reference, '42');
  assert.deepEqual(body.installments, { value: 3 });
  assert.deepEqual(body.shopperName, { firstName: 'Maria', lastName: 'da Silva' });
  assert.equal(body.telephoneNumber, '+5511987654321');
  assert.deepEqual(body.additionalData, { manualCapture: 'true' });
  assert.equal((body.paymentMethod as { expiryMonth: string }).expiryMonth, '03');
});

test('with authentication (3-D Secure, CONTRACT §11.2) the /payments body passes the official file, with the redirect flow fields', () => {
  const browser = {
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
    acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    language: 'pt-BR',
    colorDepth: 24,
    screenHeight: 844,
    screenWidth: 390,
    timeZoneOffset: 180,
    javaEnabled: false,
  };
  const sale = (method: 'DEBIT_CARD' | 'CREDIT_CARD') =>
    paymentRequest(
      { merchantAccount: 'LojaBR', capture: 'automatic', returnUrl: 'https://gateway.invalid/adyen/return' },
      {
        saleId: 43,
        amountCents: 4990,
        method,
        installments: 1,
        card: { number: '4212345678901237', holderName: 'ANA LIMA', expirationMonth: 1, expirationYear: 2031, cvv: '987', brand: 'VISA' },
        customer: { name: 'Ana Lima', email: 'ana@example.com', document: null, phone: null },
        shipping: null,
        authentication: {
          baseUrl: 'https://pagamentos.example.com',
          origin: 'https://pagamentos.example.com',
          returnUrl: 'https://pagamentos.example.com/checkout/3ds/TOKEN/return',
          token: 'TOKEN',
          browser,
          ip: '203.0.113.7',
        },
      },
    );
  const debit = sale('DEBIT_CARD');
  assert.deepEqual(checkAdyenRequest({ method: 'POST', path: '/payments', body: debit }), []);
  assert.equal(debit.channel, 'Web');
  assert.equal(debit.origin, 'https://pagamentos.example.com');
  assert.equal(debit.returnUrl, 'https://pagamentos.example.com/checkout/3ds/TOKEN/return');
  assert.deepEqual(debit.browserInfo, browser);
  assert.equal(debit.shopperIP, '203.0.113.7');
  assert.deepEqual(debit.authenticationData, { attemptAuthentication: 'always', threeDSRequestData: { nativeThreeDS: 'disabled' } });
  assert.equal((debit.paymentMethod as { fundingSource: string }).fundingSource, 'debit');
  assert.equal(debit.shopperInteraction, 'Ecommerce');
  // Credit: the issuer's (and Adyen's) rules decide whether to ask; the redirect flow all the same.
  const credit = sale('CREDIT_CARD');
  assert.deepEqual(checkAdyenRequest({ method: 'POST', path: '/payments', body: credit }), []);
  assert.deepEqual(credit.authenticationData, { threeDSRequestData: { nativeThreeDS: 'disabled' } });
  assert.deepEqual(credit.browserInfo, browser);
  // The answers of the redirect flow: wait for the shopper only when one was sent, and follow a redirect action.
  assert.deepEqual(paymentVerdict('RedirectShopper', true), { result: 'SHOPPER', cancel: false });
  assert.deepEqual(paymentVerdict('RedirectShopper', false), { result: 'ERROR', cancel: true });
  assert.deepEqual(shopperAction({ type: 'redirect', method: 'GET', url: 'https://acs.example/3ds?MD=1', paymentMethodType: 'scheme' }), {
    method: 'GET',
    url: 'https://acs.example/3ds?MD=1',
    data: null,
  });
  assert.deepEqual(shopperAction({ type: 'redirect', method: 'POST', url: 'https://acs.example/3ds', data: { MD: 'm', PaReq: 'p' } }), {
    method: 'POST',
    url: 'https://acs.example/3ds',
    data: { MD: 'm', PaReq: 'p' },
  });
  assert.equal(shopperAction({ type: 'threeDS2', token: 't' }), null);
  assert.equal(shopperAction({ type: 'redirect', method: 'GET', url: 'javascript:alert(1)' }), null);
});

test('CARD_PROVIDER=adyen needs its settings, each bad one named', () => {
  assert.deepEqual(loadCardRailConfig({}), { provider: 'sandbox', adyen: null });
  const full = {
    CARD_PROVIDER: 'adyen',
    ADYEN_API_KEY: 'k',
    ADYEN_MERCHANT_ACCOUNT: 'LojaBR',
    ADYEN_CHECKOUT_URL: 'https://checkout-test.adyen.com/v71/',
    ADYEN_HMAC_KEY: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    ADYEN_NOTIFICATION_USERNAME: 'u',
    ADYEN_NOTIFICATION_PASSWORD: 'p',
  };
  const loaded = loadCardRailConfig(full).adyen!;
  assert.equal(loaded.checkoutUrl, 'https://checkout-test.adyen.com/v71');
  assert.equal(loaded.capture, 'automatic');
  assert.equal(loaded.hmacKey.length, 32);
  assert.throws(
    () => loadCardRailConfig({ ...full, ADYEN_API_KEY: '' }),
    (e: Error) => e instanceof ConfigError && /ADYEN_API_KEY/.test(e.message),
  );
  assert.throws(() => loadCardRailConfig({ ...full, ADYEN_HMAC_KEY: 'xyz' }), /ADYEN_HMAC_KEY/);
  assert.throws(() => loadCardRailConfig({ ...full, ADYEN_CHECKOUT_URL: 'http://checkout-test.adyen.com/v71' }), /https/);
  assert.throws(() => loadCardRailConfig({ ...full, ADYEN_CAPTURE: 'later' }), /ADYEN_CAPTURE/);
});
