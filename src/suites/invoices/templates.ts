/**
 * Email templates for the invoice tasks, in Swedish and English. An email is assembled from
 * independent slots (greeting, introduction, context sentence, question body, how the key
 * fact is written, closing, signature); the generator records which variant of each slot it
 * used and never reuses the same combination within a question type, so no two emails of a
 * type read alike even before their facts differ.
 */
import type { Lang } from './names.js';

export type QuestionType =
  | 'subscription_product_department'
  | 'subscription_period_invoice'
  | 'subscription_supplier_amount'
  | 'supplier_subscriber_lookup'
  | 'bank_id_period_lookup';

export type SenderRole = 'client_staff' | 'end_customer';

export type IdKind = 'iban' | 'bankgiro' | 'postgiro' | 'vat_number';

/** The facts an email may mention. Gold values are never among them. */
export interface EmailFacts {
  senderName: string;
  /** The sender's own department (staff only), never the department asked about. */
  senderDepartment: string;
  organisation: string;
  /** The subscription phrase, e.g. "subscription no. 67484" (types 1–3). */
  subscription?: string;
  supplier?: string;
  product?: string;
  subscriber?: string;
  idLabel?: string;
  idValue?: string;
  period?: string;
}

type Slot = (f: EmailFacts) => string;
type ByLang<T> = Record<Lang, readonly T[]>;

const GREETINGS: ByLang<string> = {
  sv: ['Hej!', 'Hej,', 'Hejsan!', 'God morgon!', 'Hej kundtjänst,', 'Till kundtjänst:'],
  en: ['Hi,', 'Hello,', 'Dear customer service,', 'Good morning,', 'Hi there,', 'Dear support team,'],
};

const INTROS: Record<SenderRole, ByLang<Slot>> = {
  client_staff: {
    sv: [
      (f) => `Jag arbetar på ${f.organisation} och har en fråga om en av våra prenumerationer.`,
      (f) => `Vi på ${f.organisation} går igenom våra tidskriftsprenumerationer inför nästa år.`,
      (f) => `Jag sköter fakturahanteringen på ${f.organisation}.`,
      (f) => `Jag hör av mig från ${f.organisation} (${f.senderDepartment}).`,
      () => '',
      (f) => `Här kommer en fråga från ${f.organisation}.`,
    ],
    en: [
      (f) => `I work at ${f.organisation} and have a question about one of our subscriptions.`,
      (f) => `We at ${f.organisation} are reviewing our periodical subscriptions for next year.`,
      (f) => `I handle supplier invoices at ${f.organisation}.`,
      (f) => `I'm writing from ${f.organisation} (${f.senderDepartment}).`,
      () => '',
      (f) => `A quick question from ${f.organisation}.`,
    ],
  },
  end_customer: {
    sv: [
      (f) => `Jag får en tidskrift via min arbetsgivare ${f.organisation}.`,
      (f) => `Jag är prenumerant genom mitt jobb på ${f.organisation}.`,
      () => 'Min arbetsgivare betalar en prenumeration åt mig.',
      () => '',
    ],
    en: [
      (f) => `I receive a publication through my employer, ${f.organisation}.`,
      (f) => `I'm a subscriber through my job at ${f.organisation}.`,
      () => 'My employer pays for a subscription for me.',
      () => '',
    ],
  },
};

/** An optional sentence of context; staff and subscribers have different reasons to write. */
const EXTRAS: Record<SenderRole, ByLang<string>> = {
  client_staff: {
    sv: [
      '',
      'Det är lite bråttom eftersom bokslutet närmar sig.',
      'Vi vill gärna få ordning på detta innan månadsskiftet.',
      'Jag har försökt hitta uppgiften själv utan att lyckas.',
      'Tack för snabb hjälp senast!',
    ],
    en: [
      '',
      "It's a bit urgent as we're closing the books soon.",
      "We'd like to sort this out before the end of the month.",
      'I tried to find this myself without success.',
      'Thanks for the quick help last time!',
    ],
  },
  end_customer: {
    sv: ['', 'Jag har letat i mina mejl utan att hitta det.', 'Min chef bad mig kontrollera detta.', 'Jag flyttar snart och vill ha koll på mina prenumerationer.'],
    en: ['', "I've searched my inbox but can't find it.", 'My manager asked me to check this.', "I'm moving soon and want to keep track of my subscriptions."],
  },
};

/** How a subscription number is written (types 1–3). */
export const SUBSCRIPTION_PHRASES: ByLang<(n: number) => string> = {
  sv: [(n) => `prenumeration ${n}`, (n) => `prenumerationsnummer ${n}`, (n) => `abonnemang nr ${n}`, (n) => `prenumeration nr. ${n}`],
  en: [(n) => `subscription ${n}`, (n) => `subscription number ${n}`, (n) => `subscription no. ${n}`, (n) => `sub #${n}`],
};

export const ID_LABELS: Record<Lang, Record<IdKind, readonly string[]>> = {
  sv: { iban: ['IBAN'], bankgiro: ['bankgiro', 'bankgironummer'], postgiro: ['plusgiro', 'postgiro'], vat_number: ['momsregistreringsnummer', 'VAT-nummer'] },
  en: { iban: ['IBAN'], bankgiro: ['bankgiro', 'bankgiro number'], postgiro: ['postgiro', 'plusgiro account'], vat_number: ['VAT number', 'VAT registration number'] },
};

const BODIES: Record<QuestionType, Record<SenderRole, ByLang<Slot>>> = {
  subscription_product_department: {
    client_staff: {
      sv: [
        (f) => `Kan ni berätta vilken produkt ${f.subscription} gäller och vilken avdelning den är kopplad till?`,
        (f) => `Vi hittar inte vad ${f.subscription} avser i vårt system. Vilken tidskrift är det, och på vilken avdelning ligger den?`,
        (f) => `Jag behöver veta vilken produkt som ingår i ${f.subscription} samt vilken avdelning som står som mottagare.`,
        (f) => `Vilken titel och vilken avdelning hör ${f.subscription} till? Vi ska fördela kostnaden rätt.`,
        (f) => `Skulle ni kunna kontrollera ${f.subscription} åt mig – vad är det för produkt och vilken avdelning är den registrerad på?`,
      ],
      en: [
        (f) => `Could you tell me which product ${f.subscription} is for and which department it belongs to?`,
        (f) => `We can't work out what ${f.subscription} refers to. Which publication is it, and which department is it booked under?`,
        (f) => `I need to know the product on ${f.subscription} and the department it is registered to.`,
        (f) => `Which title and which department does ${f.subscription} relate to? We want to allocate the cost correctly.`,
        (f) => `Would you mind checking ${f.subscription} for me: what product is it, and which department is it set up for?`,
      ],
    },
    end_customer: {
      sv: [
        (f) => `Jag har ${f.subscription} men minns inte vilken tidskrift det är. Vilken produkt gäller det, och vilken avdelning står den på?`,
        (f) => `Kan ni se vilken produkt jag får på ${f.subscription} och vilken avdelning hos oss som betalar den?`,
        (f) => `Vad är det för tidning på ${f.subscription}, och vilken avdelning är den registrerad på?`,
      ],
      en: [
        (f) => `I have ${f.subscription} but can't remember which publication it is. What product is it, and which department is it under?`,
        (f) => `Can you see which product I receive on ${f.subscription} and which of our departments pays for it?`,
        (f) => `What publication is ${f.subscription}, and which department is it registered to?`,
      ],
    },
  },
  subscription_period_invoice: {
    client_staff: {
      sv: [
        (f) => `Hur länge löper ${f.subscription}, dvs. när slutar den senaste perioden, och på vilken faktura debiterades den?`,
        (f) => `Kan ni bekräfta slutdatum för den aktuella perioden på ${f.subscription} och ange fakturanumret?`,
        (f) => `Till vilket datum är ${f.subscription} betald, och vilket fakturanummer hade den senaste fakturan?`,
        (f) => `Jag vill stämma av ${f.subscription}: när tar nuvarande leveransperiod slut och vilken faktura hör den till?`,
        (f) => `Vilket fakturanummer gäller för den senaste perioden av ${f.subscription}, och när upphör perioden?`,
      ],
      en: [
        (f) => `How long does ${f.subscription} run, i.e. when does the latest period end, and which invoice was it billed on?`,
        (f) => `Could you confirm the end date of the current period on ${f.subscription} and give me the invoice number?`,
        (f) => `Until what date is ${f.subscription} paid for, and what was the number of the latest invoice?`,
        (f) => `I'm reconciling ${f.subscription}: when does the current delivery period finish and which invoice does it belong to?`,
        (f) => `What invoice number covers the most recent period of ${f.subscription}, and when does that period end?`,
      ],
    },
    end_customer: {
      sv: [
        (f) => `Hur länge gäller ${f.subscription}, och vilket fakturanummer hade den senaste fakturan?`,
        (f) => `När tar den nuvarande perioden på ${f.subscription} slut? Jag behöver också fakturanumret.`,
        (f) => `Kan ni tala om när den senaste perioden på ${f.subscription} slutar och på vilken faktura den betalades?`,
      ],
      en: [
        (f) => `How long is my ${f.subscription} valid, and what was the number of the latest invoice?`,
        (f) => `When does the current period of ${f.subscription} end? I also need the invoice number.`,
        (f) => `Could you tell me when my latest period on ${f.subscription} ends and which invoice paid for it?`,
      ],
    },
  },
  subscription_supplier_amount: {
    client_staff: {
      sv: [
        (f) => `Vilken leverantör står bakom ${f.subscription}, och vad kostade den senaste perioden?`,
        (f) => `Kan ni tala om vem som är leverantör för ${f.subscription} och vilket belopp som fakturerades senast?`,
        (f) => `Vi behöver veta leverantören till ${f.subscription} samt beloppet för den senaste perioden.`,
        (f) => `Från vilket förlag kommer ${f.subscription}, och hur mycket kostade senaste leveransperioden?`,
        (f) => `Vem levererar ${f.subscription} och vad blev beloppet på den senaste orderraden?`,
      ],
      en: [
        (f) => `Which supplier is behind ${f.subscription}, and what did the latest period cost?`,
        (f) => `Could you tell me who the supplier of ${f.subscription} is and the amount billed most recently?`,
        (f) => `We need the supplier for ${f.subscription} and the amount for its latest period.`,
        (f) => `Which publisher does ${f.subscription} come from, and how much was the most recent delivery period?`,
        (f) => `Who supplies ${f.subscription}, and what was the amount on the latest order row?`,
      ],
    },
    end_customer: {
      sv: [
        (f) => `Vem är det som levererar ${f.subscription}, och vad kostade den senaste perioden?`,
        (f) => `Vilket förlag ger ut det jag får på ${f.subscription}? Och vilket belopp fakturerades för senaste perioden?`,
        (f) => `Jag undrar vilken leverantör ${f.subscription} kommer från och vad den senast kostade.`,
      ],
      en: [
        (f) => `Who is the supplier of my ${f.subscription}, and what did the latest period cost?`,
        (f) => `Which publisher sends what I get on ${f.subscription}? And what amount was billed for the latest period?`,
        (f) => `I'd like to know which supplier ${f.subscription} comes from and what it cost most recently.`,
      ],
    },
  },
  supplier_subscriber_lookup: {
    client_staff: {
      sv: [
        (f) => `Vi har fått en fråga från ${f.supplier} om ${f.product} till ${f.subscriber}. Vilket prenumerationsnummer har den, och vilken avdelning är den kopplad till?`,
        (f) => `${f.supplier} hänvisar till en prenumeration på ${f.product} för ${f.subscriber}. Kan ni ta fram prenumerationsnumret och avdelningen?`,
        (f) => `Jag letar efter prenumerationen på ${f.product} från ${f.supplier} som ${f.subscriber} får. Vilket nummer har den och vilken avdelning står på den?`,
        (f) => `Kan ni kolla vilket prenumerationsnummer ${f.subscriber} har för ${f.product} hos ${f.supplier}, och vilken avdelning som betalar?`,
        (f) => `Gällande ${f.product} (${f.supplier}) till ${f.subscriber}: vad är prenumerationsnumret och vilken avdelning tillhör den?`,
      ],
      en: [
        (f) => `We've had a query from ${f.supplier} about ${f.product} for ${f.subscriber}. What is the subscription number, and which department is it linked to?`,
        (f) => `${f.supplier} refers to a subscription to ${f.product} for ${f.subscriber}. Could you find the subscription number and the department?`,
        (f) => `I'm looking for the ${f.product} subscription from ${f.supplier} that ${f.subscriber} receives. What number does it have and which department is on it?`,
        (f) => `Could you check which subscription number ${f.subscriber} has for ${f.product} with ${f.supplier}, and which department pays for it?`,
        (f) => `Regarding ${f.product} (${f.supplier}) for ${f.subscriber}: what is the subscription number and which department does it belong to?`,
      ],
    },
    end_customer: {
      sv: [
        (f) => `Jag får ${f.product} från ${f.supplier} genom jobbet men har tappat bort mitt prenumerationsnummer. Vilket är det, och vilken avdelning står den på? Prenumerationen står på ${f.subscriber}.`,
        (f) => `Min prenumeration på ${f.product} (${f.supplier}) står på namnet ${f.subscriber}. Kan ni ge mig prenumerationsnumret och tala om vilken avdelning som betalar?`,
        (f) => `Vilket prenumerationsnummer har jag för ${f.product} hos ${f.supplier}? Den är registrerad på ${f.subscriber}. Vilken avdelning är den kopplad till?`,
      ],
      en: [
        (f) => `I receive ${f.product} from ${f.supplier} through work but have lost my subscription number. What is it, and which department is it under? It's in the name of ${f.subscriber}.`,
        (f) => `My subscription to ${f.product} (${f.supplier}) is in the name ${f.subscriber}. Could you give me the subscription number and tell me which department pays?`,
        (f) => `What subscription number do I have for ${f.product} with ${f.supplier}? It's registered to ${f.subscriber}. Which department is it linked to?`,
      ],
    },
  },
  bank_id_period_lookup: {
    client_staff: {
      sv: [
        (f) => `Vi har fått ett betalningskrav till ${f.idLabel} ${f.idValue} för ${f.subscriber}, perioden ${f.period}. Vilken produkt gäller det och vilket fakturanummer har fakturan?`,
        (f) => `En leverantör med ${f.idLabel} ${f.idValue} fakturerar oss för ${f.subscriber} avseende ${f.period}. Kan ni säga vilken produkt det är och fakturans nummer?`,
        (f) => `Jag hittar en betalning till ${f.idLabel} ${f.idValue} som gäller ${f.subscriber} under ${f.period}. Vilken produkt och vilken faktura motsvarar den?`,
        (f) => `Kan ni identifiera fakturan från ${f.idLabel} ${f.idValue} för ${f.subscriber} (${f.period})? Jag behöver fakturanumret och produkten.`,
        (f) => `Angående ${f.idLabel} ${f.idValue}: vi har en faktura för ${f.subscriber} för ${f.period}. Vad är det för produkt, och vilket är fakturanumret?`,
      ],
      en: [
        (f) => `We've received a payment request to ${f.idLabel} ${f.idValue} for ${f.subscriber}, period ${f.period}. Which product is it for and what is the invoice number?`,
        (f) => `A supplier with ${f.idLabel} ${f.idValue} is invoicing us for ${f.subscriber} for ${f.period}. Could you tell me the product and the invoice number?`,
        (f) => `I've found a payment to ${f.idLabel} ${f.idValue} concerning ${f.subscriber} during ${f.period}. Which product and which invoice does it match?`,
        (f) => `Could you identify the invoice from ${f.idLabel} ${f.idValue} for ${f.subscriber} (${f.period})? I need the invoice number and the product.`,
        (f) => `About ${f.idLabel} ${f.idValue}: we have an invoice for ${f.subscriber} covering ${f.period}. What product is it, and what is the invoice number?`,
      ],
    },
    end_customer: { sv: [], en: [] },
  },
};

const CLOSINGS: ByLang<string> = {
  sv: ['Tack på förhand!', 'Tack för hjälpen.', 'Vänliga hälsningar', 'Med vänlig hälsning', 'Mvh', 'Hälsningar'],
  en: ['Thanks in advance,', 'Kind regards,', 'Best regards,', 'Many thanks,', 'Cheers,', 'Regards,'],
};

const SIGNATURES: Record<SenderRole, ByLang<Slot>> = {
  client_staff: {
    sv: [(f) => f.senderName, (f) => `${f.senderName}\n${f.senderDepartment}\n${f.organisation}`, (f) => `${f.senderName}, ${f.organisation}`],
    en: [(f) => f.senderName, (f) => `${f.senderName}\n${f.senderDepartment}\n${f.organisation}`, (f) => `${f.senderName}, ${f.organisation}`],
  },
  end_customer: {
    sv: [(f) => f.senderName, (f) => `/${f.senderName}`, (f) => `${f.senderName} (prenumerant)`],
    en: [(f) => f.senderName, (f) => `/${f.senderName}`, (f) => `${f.senderName} (subscriber)`],
  },
};

/** Which variant of each slot an email uses. */
export interface TemplateChoice {
  greeting: number;
  intro: number;
  extra: number;
  body: number;
  closing: number;
  signature: number;
}

export function bodyCount(type: QuestionType, role: SenderRole, lang: Lang): number {
  return BODIES[type][role][lang].length;
}

/** Draw a template choice with `pick(n)` returning an index below n. */
export function chooseTemplate(type: QuestionType, role: SenderRole, lang: Lang, pick: (n: number) => number): TemplateChoice {
  return {
    greeting: pick(GREETINGS[lang].length),
    intro: pick(INTROS[role][lang].length),
    extra: pick(EXTRAS[role][lang].length),
    body: pick(BODIES[type][role][lang].length),
    closing: pick(CLOSINGS[lang].length),
    signature: pick(SIGNATURES[role][lang].length),
  };
}

export function templateKey(lang: Lang, role: SenderRole, c: TemplateChoice, factForm: string): string {
  return `${lang}/${role}/g${c.greeting}i${c.intro}x${c.extra}b${c.body}c${c.closing}s${c.signature}/${factForm}`;
}

export function renderEmail(type: QuestionType, role: SenderRole, lang: Lang, c: TemplateChoice, facts: EmailFacts): string {
  const paragraph = [INTROS[role][lang][c.intro]!(facts), BODIES[type][role][lang][c.body]!(facts), EXTRAS[role][lang][c.extra]!]
    .filter((s) => s !== '')
    .join(' ');
  return [GREETINGS[lang][c.greeting]!, paragraph, `${CLOSINGS[lang][c.closing]!}\n${SIGNATURES[role][lang][c.signature]!(facts)}`].join('\n\n');
}
