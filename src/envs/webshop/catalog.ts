/**
 * The simulated store's catalog and shopping goals, generated from a seed (WebShop-like):
 * products of a few categories with attributes (material, features), options (color, size) and
 * a price; a goal names a category, attributes, options and a price bound, and is made from a
 * real product so at least one product satisfies it fully.
 */
import { Rng } from '../../core/index.ts';
import { at, entry } from '../../core/indexing.ts';

export interface Product {
  id: string;
  title: string;
  category: string;
  attributes: string[];
  options: Record<string, string[]>;
  price: number;
}

export interface Goal {
  /** The product the goal was made from (a full match). */
  productId: string;
  category: string;
  attributes: string[];
  options: Record<string, string>;
  maxPrice: number;
  instruction: string;
}

const categories: Record<string, { attributes: string[]; options: Record<string, string[]>; price: [number, number] }> =
  {
    backpack: {
      attributes: ['waterproof', 'nylon', 'leather', 'lightweight', 'laptop sleeve'],
      options: { color: ['black', 'navy', 'olive', 'red'], size: ['small', 'medium', 'large'] },
      price: [20, 120],
    },
    't-shirt': {
      attributes: ['cotton', 'organic', 'slim fit', 'crew neck', 'v neck'],
      options: { color: ['white', 'black', 'grey', 'green'], size: ['s', 'm', 'l', 'xl'] },
      price: [8, 40],
    },
    sneakers: {
      attributes: ['running', 'leather', 'breathable', 'non slip', 'vegan'],
      options: { color: ['white', 'black', 'blue'], size: ['7', '8', '9', '10', '11'] },
      price: [30, 150],
    },
    mug: {
      attributes: ['ceramic', 'insulated', 'dishwasher safe', 'stainless steel'],
      options: { color: ['white', 'black', 'blue', 'pink'], size: ['12 oz', '16 oz'] },
      price: [6, 35],
    },
    headphones: {
      attributes: ['wireless', 'noise cancelling', 'over ear', 'foldable', 'bluetooth'],
      options: { color: ['black', 'silver', 'white'] },
      price: [25, 300],
    },
    lamp: {
      attributes: ['led', 'dimmable', 'usb charging', 'wooden', 'touch control'],
      options: { color: ['white', 'brass', 'black'], size: ['small', 'large'] },
      price: [15, 90],
    },
  };
const brands = ['Kestrel', 'Orvane', 'Brisk', 'Tallow', 'Mireo', 'Quillon', 'Sable', 'Nimbo'];

export function generateCatalog(seed: number, size = 240): Product[] {
  const rng = new Rng(seed);
  const names = Object.keys(categories);
  return Array.from({ length: size }, (_, i) => {
    const category = at(names, i % names.length, 'categories');
    const spec = entry(categories, category, 'category');
    const attributes = rng
      .shuffle([...spec.attributes])
      .slice(0, rng.range(1, 3))
      .sort();
    const options = Object.fromEntries(
      Object.entries(spec.options).map(([name, values]) => [
        name,
        rng
          .shuffle([...values])
          .slice(0, rng.range(2, values.length))
          .sort(),
      ]),
    );
    const price = Math.round((spec.price[0] + rng.next() * (spec.price[1] - spec.price[0])) * 100) / 100;
    const id = `B0${(rng.nextUint32() % 36 ** 6).toString(36).toUpperCase().padStart(6, '0')}`;
    return {
      id,
      title: `${rng.pick(brands)} ${attributes.join(' ')} ${category}`,
      category,
      attributes,
      options,
      price,
    };
  });
}

/** A goal made from one product of the catalog: its category, attributes, one value per option and a price bound above its price. */
export function generateGoal(rng: Rng, catalog: readonly Product[]): Goal {
  const product = rng.pick(catalog);
  const options = Object.fromEntries(Object.entries(product.options).map(([name, values]) => [name, rng.pick(values)]));
  const maxPrice = Math.ceil(product.price / 10) * 10 + rng.pick([0, 10, 20]);
  const optionText = Object.entries(options)
    .map(([name, value]) => `${name}: ${value}`)
    .join(', ');
  const instruction = `i need a ${product.attributes.join(' ')} ${product.category}, ${optionText}, price lower than ${maxPrice.toFixed(2)} dollars`;
  return {
    productId: product.id,
    category: product.category,
    attributes: product.attributes,
    options,
    maxPrice,
    instruction,
  };
}

/**
 * WebShop's reward for buying `product` with `selected` options:
 * r = r_type · (|attributes matched| + |options matched| + [price ≤ bound]) / (|goal attributes| + |goal options| + 1),
 * with r_type = 1 for the goal's category, else 0.
 */
export function purchaseReward(goal: Goal, product: Product, selected: Record<string, string>): number {
  if (product.category !== goal.category) return 0;
  const attributes = goal.attributes.filter((attribute) => product.attributes.includes(attribute)).length;
  const options = Object.entries(goal.options).filter(([name, value]) => selected[name] === value).length;
  const price = product.price <= goal.maxPrice ? 1 : 0;
  return (attributes + options + price) / (goal.attributes.length + Object.keys(goal.options).length + 1);
}
