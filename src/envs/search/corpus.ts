/**
 * A generated encyclopedia of fictional entities (so no answer can come from pre-training):
 * countries, cities, people and companies with made-up names, linked to each other, each with a
 * short article. Questions are single-hop (one article answers them) or multi-hop (a bridge
 * entity found in one article leads to the next). Everything is a pure function of the corpus
 * seed.
 */
import { Rng } from '../../core/index.ts';

export interface Article {
  id: number;
  title: string;
  text: string;
}

export interface Question {
  question: string;
  answer: string;
  /** The titles of the articles that support the answer, in hop order. */
  support: string[];
  hops: 1 | 2;
}

export interface Corpus {
  articles: Article[];
  questions: Question[];
}

const onsets = [
  'b',
  'br',
  'd',
  'dr',
  'f',
  'g',
  'k',
  'kr',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  'st',
  't',
  'th',
  'v',
  'z',
  'qu',
];
const vowels = ['a', 'e', 'i', 'o', 'u', 'ae', 'ia', 'ou'];
const codas = ['', '', 'n', 'r', 's', 'l', 'th', 'x'];
const occupations = ['painter', 'astronomer', 'engineer', 'poet', 'botanist', 'cartographer', 'composer', 'architect'];
const products = [
  'clockwork lamps',
  'glass bells',
  'river barges',
  'paper kites',
  'copper stoves',
  'silk maps',
  'salt crackers',
];

export function generateCorpus(seed: number, sizes = { countries: 10, cities: 40, people: 80, companies: 30 }): Corpus {
  const rng = new Rng(seed);
  const used = new Set<string>();
  const word = (syllables: number): string => {
    for (;;) {
      let text = '';
      for (let i = 0; i < syllables; i++)
        text += rng.pick(onsets) + rng.pick(vowels) + (i === syllables - 1 ? rng.pick(codas) : '');
      const name = text.charAt(0).toUpperCase() + text.slice(1);
      if (!used.has(name.toLowerCase())) {
        used.add(name.toLowerCase());
        return name;
      }
    }
  };
  const countries = Array.from({ length: sizes.countries }, () => ({
    name: word(3),
    capitalYear: rng.range(900, 1700),
  }));
  const cities = Array.from({ length: sizes.cities }, () => ({
    name: word(2),
    country: rng.pick(countries),
    founded: rng.range(400, 1800),
    river: word(2),
  }));
  const people = Array.from({ length: sizes.people }, () => ({
    name: `${word(2)} ${word(2)}`,
    occupation: rng.pick(occupations),
    born: rng.range(1700, 1990),
    city: rng.pick(cities),
  }));
  const companies = Array.from({ length: sizes.companies }, () => ({
    name: `${word(2)} Works`,
    founder: rng.pick(people),
    city: rng.pick(cities),
    founded: rng.range(1800, 2010),
    product: rng.pick(products),
  }));

  const articles: Article[] = [];
  const add = (title: string, text: string): void => void articles.push({ id: articles.length, title, text });
  for (const c of countries) add(c.name, `${c.name} is a country. Its first charter was signed in ${c.capitalYear}.`);
  for (const c of cities)
    add(c.name, `${c.name} is a city in ${c.country.name}, on the ${c.river} river. It was founded in ${c.founded}.`);
  for (const p of people)
    add(p.name, `${p.name} is a ${p.occupation}, born in ${p.born} in the city of ${p.city.name}.`);
  for (const c of companies)
    add(
      c.name,
      `${c.name} is a company that makes ${c.product}. It was founded in ${c.founded} by ${c.founder.name} and is based in ${c.city.name}.`,
    );

  const questions: Question[] = [];
  const ask = (question: string, answer: string | number, support: string[]): void =>
    void questions.push({ question, answer: String(answer), support, hops: support.length as 1 | 2 });
  for (const c of cities) {
    ask(`In which country is the city of ${c.name}?`, c.country.name, [c.name]);
    ask(`In what year was ${c.name} founded?`, c.founded, [c.name]);
  }
  for (const p of people) {
    ask(`In which city was ${p.name} born?`, p.city.name, [p.name]);
    ask(`In which country was ${p.name} born?`, p.city.country.name, [p.name, p.city.name]);
    ask(`On which river is the city where ${p.name} was born?`, p.city.river, [p.name, p.city.name]);
  }
  for (const c of companies) {
    ask(`Who founded ${c.name}?`, c.founder.name, [c.name]);
    ask(`What does ${c.name} make?`, c.product, [c.name]);
    ask(`In which city was the founder of ${c.name} born?`, c.founder.city.name, [c.name, c.founder.name]);
    ask(`In which country is ${c.name} based?`, c.city.country.name, [c.name, c.city.name]);
  }
  return { articles, questions };
}
