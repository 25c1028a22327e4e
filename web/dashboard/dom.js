// Small DOM helpers shared by the dashboard's modules.

export const $ = (id) => document.getElementById(id);

export async function getJson(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `${path}: HTTP ${response.status}`);
  return body;
}

/** h('td', { class, dataset, onclick, …attributes }, …children) → an element. */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'checked' || key === 'selected' || key === 'disabled') node[key] = Boolean(value);
    else if (value !== false && value !== undefined && value !== null)
      node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat())
    if (child !== null && child !== undefined && child !== false)
      node.append(child instanceof Node ? child : String(child));
  return node;
}

/** Sets an element's text only when it changed (so a refresh leaves focus and selection alone). */
export function setText(node, text) {
  const value = String(text);
  if (node.textContent !== value) node.textContent = value;
}

/** Replaces a <select>'s options, keeping its value when still offered. */
export function fillSelect(select, options) {
  const previous = select.value;
  const same =
    select.options.length === options.length &&
    options.every(([value, text], i) => select.options[i].value === value && select.options[i].text === text);
  if (same) return;
  select.replaceChildren(...options.map(([value, text]) => h('option', { value }, text)));
  if (options.some(([value]) => value === previous)) select.value = previous;
}
