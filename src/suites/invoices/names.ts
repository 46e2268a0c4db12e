/**
 * Word lists for the procedural invoice world. Swedish and English, because the seed's client
 * is Swedish and half of its customer email is in English. Names are combined, never listed
 * whole, so the world has more distinct entities than any list here.
 */

export type Lang = 'sv' | 'en';

export const FIRST_NAMES: Record<Lang, readonly string[]> = {
  sv: [
    'Anna', 'Erik', 'Maria', 'Lars', 'Karin', 'Johan', 'Eva', 'Anders', 'Sara', 'Mikael', 'Lena', 'Per',
    'Kerstin', 'Fredrik', 'Ingrid', 'Magnus', 'Elin', 'Henrik', 'Sofia', 'Jonas', 'Emma', 'Gustav',
    'Linnea', 'Oskar', 'Malin', 'Björn', 'Åsa', 'Nils', 'Helena', 'Olof', 'Ulla', 'Mats', 'Frida',
    'Stefan', 'Agneta', 'Tobias', 'Maja', 'Viktor', 'Ebba', 'Göran', 'Astrid', 'Sven', 'Ylva', 'Rasmus',
  ],
  en: [
    'James', 'Emily', 'Oliver', 'Charlotte', 'Thomas', 'Hannah', 'William', 'Grace', 'Daniel', 'Olivia',
    'George', 'Amelia', 'Samuel', 'Lucy', 'Benjamin', 'Isabel', 'Edward', 'Chloe', 'Henry', 'Rachel',
    'Jack', 'Megan', 'Matthew', 'Sophie', 'Andrew', 'Laura', 'Patrick', 'Eleanor', 'Richard', 'Abigail',
    'Michael', 'Harriet', 'David', 'Fiona', 'Peter', 'Zoe', 'Robert', 'Alice', 'Christopher', 'Natalie',
  ],
};

export const SURNAMES: Record<Lang, readonly string[]> = {
  sv: [
    'Andersson', 'Johansson', 'Karlsson', 'Nilsson', 'Eriksson', 'Larsson', 'Olsson', 'Persson', 'Svensson',
    'Gustafsson', 'Pettersson', 'Jonsson', 'Lindberg', 'Lindqvist', 'Magnusson', 'Lindström', 'Axelsson',
    'Bergström', 'Lundberg', 'Lundgren', 'Berglund', 'Fredriksson', 'Sandberg', 'Henriksson', 'Forsberg',
    'Sjöberg', 'Wallin', 'Engström', 'Eklund', 'Danielsson', 'Lundin', 'Håkansson', 'Björk', 'Bergman',
    'Holm', 'Samuelsson', 'Fransson', 'Nyström', 'Holmberg', 'Åberg', 'Söderberg', 'Nordin', 'Ek', 'Hedlund',
  ],
  en: [
    'Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Johnson', 'Davies', 'Robinson', 'Wright',
    'Thompson', 'Evans', 'Walker', 'White', 'Roberts', 'Green', 'Hall', 'Wood', 'Jackson', 'Clarke',
    'Patel', 'Turner', 'Hughes', 'Edwards', 'Harris', 'Martin', 'Cooper', 'Hill', 'Ward', 'Morris',
    'Moore', 'Clark', 'Baker', 'Harrison', 'Morgan', 'Allen', 'Parker', 'Bennett', 'Carter', 'Fletcher',
  ],
};

export const CITIES: readonly string[] = [
  'Stockholm', 'Göteborg', 'Malmö', 'Uppsala', 'Västerås', 'Örebro', 'Linköping', 'Helsingborg', 'Jönköping',
  'Norrköping', 'Lund', 'Umeå', 'Gävle', 'Borås', 'Södertälje', 'Eskilstuna', 'Halmstad', 'Växjö',
  'Karlstad', 'Sundsvall', 'Östersund', 'Trollhättan', 'Luleå', 'Kalmar', 'Kristianstad', 'Falun',
  'Skövde', 'Karlskrona', 'Visby', 'Nyköping', 'Varberg', 'Uddevalla', 'Motala', 'Piteå', 'Kiruna',
  'Skellefteå', 'Borlänge', 'Ystad', 'Lidköping', 'Alingsås',
];

/** Parts of publisher (supplier) names. */
export const SUPPLIER_WORDS: Record<Lang, readonly string[]> = {
  sv: [
    'Fjäll', 'Skog', 'Sjö', 'Havs', 'Norr', 'Syd', 'Väst', 'Öst', 'Granit', 'Björk', 'Lind', 'Sten', 'Kust',
    'Ljung', 'Strand', 'Gran', 'Vind', 'Dal', 'Ängs', 'Klipp', 'Älv', 'Myr', 'Berg', 'Holm', 'Lärk',
    'Rönn', 'Tall', 'Vik', 'Ås', 'Brunn', 'Sol', 'Måne', 'Stjärn', 'Falk', 'Örn', 'Trana', 'Svan',
  ],
  en: [
    'Meridian', 'Beacon', 'Harbour', 'Summit', 'Atlas', 'Compass', 'Lantern', 'Oakridge', 'Riverside',
    'Northgate', 'Kingfisher', 'Bluebell', 'Heron', 'Granite', 'Clearwater', 'Foxglove', 'Highland',
    'Silverline', 'Westbrook', 'Ashford', 'Redwood', 'Lighthouse', 'Pinnacle', 'Keystone', 'Brightwater',
    'Evergreen', 'Falcon', 'Goldcrest', 'Hawthorn', 'Ironbridge', 'Juniper', 'Larkspur', 'Millstone',
  ],
};

export const SUPPLIER_FORMS: Record<Lang, readonly ((word: string, surname: string) => { base: string; legal: string })[]> = {
  sv: [
    (w) => ({ base: `${w}förlaget`, legal: 'AB' }),
    (w) => ({ base: `${w}media`, legal: 'AB' }),
    (w, s) => ({ base: `${s}s Tidskrifter`, legal: 'AB' }),
    (w) => ({ base: `Förlaget ${w}backen`, legal: 'AB' }),
    (w) => ({ base: `${w}pressen`, legal: 'HB' }),
    (w, s) => ({ base: `${s} & ${w}dahl Förlag`, legal: 'AB' }),
    (w) => ({ base: `Tidningshuset ${w}udden`, legal: 'AB' }),
  ],
  en: [
    (w) => ({ base: `${w} Publishing`, legal: 'Ltd' }),
    (w) => ({ base: `${w} Press`, legal: 'Ltd' }),
    (w, s) => ({ base: `${s} & ${w} Media`, legal: 'Ltd' }),
    (w) => ({ base: `${w} Periodicals`, legal: 'plc' }),
    (w, s) => ({ base: `${s} ${w} Journals`, legal: 'Ltd' }),
    (w) => ({ base: `${w} Information Services`, legal: 'AB' }),
  ],
};

/** Subject words for product (periodical) titles. */
export const TOPICS: Record<Lang, readonly string[]> = {
  sv: [
    'Ekonomi', 'Teknik', 'Medicin', 'Juridik', 'Bygg', 'Skola', 'Vård', 'Miljö', 'Energi', 'Trafik', 'Kultur',
    'Historia', 'Trädgård', 'Jakt', 'Fiske', 'Data', 'Personal', 'Fastighet', 'Skatte', 'Lantbruk', 'Handel',
    'Arkitektur', 'Design', 'Hälsa', 'Förvaltning', 'Forskning', 'Bibliotek', 'Upphandling', 'Kommun', 'Säkerhet',
  ],
  en: [
    'Economics', 'Engineering', 'Medicine', 'Law', 'Construction', 'Education', 'Nursing', 'Ecology', 'Energy',
    'Transport', 'Culture', 'History', 'Gardening', 'Finance', 'Computing', 'Management', 'Property', 'Taxation',
    'Agriculture', 'Retail', 'Architecture', 'Design', 'Public Health', 'Governance', 'Research', 'Librarianship',
    'Procurement', 'Security', 'Logistics', 'Marketing',
  ],
};

export const PRODUCT_FORMS: Record<Lang, readonly ((topic: string, adjective: string) => string)[]> = {
  sv: [
    (t, a) => `${a} ${t}tidning`,
    (t, a) => `${a} ${t}tidskrift`,
    (t) => `Tidskrift för ${t.toLowerCase()}`,
    (t, a) => `${t}magasinet ${a}`,
    (t) => `${t}världen`,
    (t, a) => `${a} ${t}nytt`,
    (t) => `${t}bladet`,
    (t) => `Aktuell ${t.toLowerCase()}`,
  ],
  en: [
    (t, a) => `${a} ${t} Review`,
    (t, a) => `Journal of ${a} ${t}`,
    (t) => `${t} Quarterly`,
    (t, a) => `The ${a} ${t} Weekly`,
    (t) => `${t} Today`,
    (t, a) => `${a} ${t} Bulletin`,
    (t) => `${t} Insight`,
  ],
};

export const ADJECTIVES: Record<Lang, readonly string[]> = {
  sv: ['Svensk', 'Nordisk', 'Modern', 'Ny', 'Praktisk', 'Allmän', 'Norrländsk', 'Skånsk', 'Västsvensk', 'Kommunal'],
  en: ['Applied', 'Modern', 'Nordic', 'European', 'Practical', 'International', 'Baltic', 'Global', 'Contemporary', 'Regional'],
};

/** Editions: the same title sold as print, digital or both are different products. */
export const EDITIONS: Record<Lang, readonly string[]> = {
  sv: ['Print', 'Digital', 'Print och digital', 'Arkiv'],
  en: ['Print', 'Digital', 'Print and Digital', 'Archive'],
};

export const DEPARTMENTS: Record<Lang, readonly string[]> = {
  sv: [
    'Ekonomiavdelningen', 'HR-avdelningen', 'Biblioteket', 'IT-avdelningen', 'Kommunikationsavdelningen',
    'Juridiska enheten', 'Forskningsenheten', 'Kundtjänst', 'Inköpsavdelningen', 'Ledningskontoret',
    'Fastighetsavdelningen', 'Miljöenheten', 'Utbildningsenheten', 'Kvalitetsenheten', 'Socialförvaltningen',
    'Stadsbyggnadskontoret', 'Kulturförvaltningen', 'Vårdenheten Norr', 'Vårdenheten Syd', 'Säkerhetsenheten',
  ],
  en: [
    'Finance', 'Human Resources', 'Library Services', 'IT Operations', 'Communications', 'Legal Affairs',
    'Research Office', 'Customer Care', 'Procurement', 'Executive Office', 'Facilities', 'Sustainability',
    'Training and Development', 'Quality Assurance', 'Clinical Services', 'Planning', 'Marketing',
    'Engineering', 'Health and Safety', 'Data and Analytics',
  ],
};

/** Client organisation name patterns; the city comes from CITIES. */
export const ORGANISATION_FORMS: Record<Lang, readonly ((city: string, word: string) => string)[]> = {
  sv: [
    (c) => `${c} kommun`,
    (c) => `Högskolan i ${c}`,
    (c) => `${c} lasarett`,
    (c) => `${c} stadsbibliotek`,
    (c, w) => `${w}gruppen i ${c} AB`,
    (c, w) => `${w} Advokatbyrå ${c}`,
    (c) => `Gymnasieförvaltningen ${c}`,
  ],
  en: [
    (c, w) => `${w} Engineering ${c}`,
    (c, w) => `${w} Consulting Group ${c}`,
    (c, w) => `${w} Pharma Nordic ${c}`,
    (c, w) => `${w} Logistics ${c}`,
    (c) => `International School of ${c}`,
  ],
};

/** Parent corporations, one per group of client organisations. */
export const CORPORATION_NAMES: readonly string[] = [
  'Sveriges Kommuner Inköpssamverkan', 'Region Mellansverige', 'Region Norrland', 'Region Syd',
  'Västra Regionförbundet', 'Statens Högskolor', 'Nordic Healthcare Holding', 'Meridian Industries Group',
  'Skandinaviska Juristgruppen AB', 'Baltic Engineering Holding', 'Kunskapsförbundet', 'Lärkträd Holding AB',
  'Atlas Consulting International', 'Nordisk Vård Koncern', 'Granit Fastigheter Koncern', 'Polar Logistics Group',
  'Svenska Bibliotekskonsortiet', 'Kustregionerna', 'Hawthorn Pharma Holdings', 'Östra Utbildningsförbundet',
];
