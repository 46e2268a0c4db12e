import { describe, expect, it } from 'vitest';
import { containsGoldValue, goldKind, scoreReply } from '../../../src/suites/invoices/score.js';

describe('invoice scorer: word boundaries', () => {
  it('"active" does not match "inactive", and ids do not match inside longer numbers', () => {
    expect(containsGoldValue('The subscription is inactive.', 'active')).toBe(false);
    expect(containsGoldValue('The subscription is active.', 'active')).toBe(true);
    expect(containsGoldValue('Subscription 167484 ends soon', '67484')).toBe(false);
    expect(containsGoldValue('Subscription 67484a', '67484')).toBe(false);
    expect(containsGoldValue('Subscription #67484, department X', '67484')).toBe(true);
  });

  it('is case-insensitive, Swedish letters included, and treats any run of spaces as one', () => {
    expect(containsGoldValue('Avdelning: EKONOMIAVDELNINGEN', 'Ekonomiavdelningen')).toBe(true);
    expect(containsGoldValue('Leverantör: ÖSTMEDIA AB', 'Östmedia AB')).toBe(true);
    expect(containsGoldValue('Product:  Nordic   Review\nPrint', 'Nordic Review Print')).toBe(true);
    // A Swedish letter is a letter: no boundary between "sjö" and "åberg".
    expect(containsGoldValue('Sjöåberg', 'Åberg')).toBe(false);
    expect(containsGoldValue('Anna Åberg', 'Åberg')).toBe(true);
  });

  it('takes punctuation in names literally', () => {
    expect(containsGoldValue('Leverantör: Berg & Ljungdahl Förlag AB.', 'Berg & Ljungdahl Förlag AB')).toBe(true);
    expect(containsGoldValue('Berg and Ljungdahl Förlag AB', 'Berg & Ljungdahl Förlag AB')).toBe(false);
  });
});

describe('invoice scorer: dates', () => {
  const gold = '2024-12-31';
  it.each([
    '2024-12-31',
    'ends 2024/12/31.',
    '31/12/2024',
    '31.12.2024',
    '31 December 2024',
    'December 31st, 2024',
    '31 dec. 2024',
    'den 31:a december 2024',
    '31 december 2024',
  ])('accepts %s', (text) => expect(containsGoldValue(text, gold)).toBe(true));

  it.each(['2024-12-30', '12/31/2024', '2024-12-311', '31 November 2024', '131 december 2024'])('rejects %s', (text) =>
    expect(containsGoldValue(text, gold)).toBe(false),
  );

  it('accepts days and months without leading zeros', () => {
    expect(containsGoldValue('2025-3-1', '2025-03-01')).toBe(true);
    expect(containsGoldValue('1 mars 2025', '2025-03-01')).toBe(true);
    expect(containsGoldValue('March 1, 2025', '2025-03-01')).toBe(true);
    expect(containsGoldValue('11 mars 2025', '2025-03-01')).toBe(false);
  });
});

describe('invoice scorer: amounts', () => {
  it.each(['16675.50', '16675,50 kr', '16 675,50', '16,675.50', '16.675,50', '16675.5', 'SEK 16 675.50.'])('16675.50 matches %s', (text) =>
    expect(containsGoldValue(text, '16675.50')).toBe(true),
  );
  it.each(['16675.51', '116675.50', '16675.509', '1.16675,50', '16675'])('16675.50 does not match %s', (text) =>
    expect(containsGoldValue(text, '16675.50')).toBe(false),
  );
  it('whole amounts may drop the decimals or use :-', () => {
    for (const text of ['6214 kr', '6 214:-', '6214,00', '6,214.00', 'total 6214.']) expect(containsGoldValue(text, '6214.00'), text).toBe(true);
    for (const text of ['6214.50', '62140', '6214,05']) expect(containsGoldValue(text, '6214.00'), text).toBe(false);
  });
  it('classifies gold values by shape', () => {
    expect(goldKind('2024-01-31')).toBe('date');
    expect(goldKind('3411.88')).toBe('amount');
    expect(goldKind('4031920')).toBe('text');
    expect(goldKind('Finance')).toBe('text');
  });
});

describe('scoreReply', () => {
  it('gives the share of gold values present; pass only when all are', () => {
    const gold = ['Tidskrift för medicin Print', '4031920'];
    expect(scoreReply('Produkt: Tidskrift för medicin Print. Faktura 4031920.', gold)).toEqual({ share: 1, pass: true, matched: [true, true] });
    expect(scoreReply('Faktura 4031920.', gold)).toEqual({ share: 0.5, pass: false, matched: [false, true] });
    expect(scoreReply('', gold)).toEqual({ share: 0, pass: false, matched: [false, false] });
    expect(scoreReply('anything', [])).toEqual({ share: 0, pass: false, matched: [] });
  });
});
