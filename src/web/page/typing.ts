/**
 * What the person is typing survives a view drawn again (the room changed under it): each field's value, and the
 * field they are in with its selection, put back into the same view once it is on the page.
 */

export interface Typing {
  draft: string;
  values: [string, string][];
  focus: { name: string; start: number | null; end: number | null } | null;
  /** What the check of the To said (compose-view.ts), kept beside it. */
  checked: { text: string; className: string } | null;
}

type Field = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

export function typingIn(view: Element): Typing | null {
  const form = view.querySelector<HTMLFormElement>("form.write");
  if (!form) return null;
  const focused = document.activeElement;
  const check = form.querySelector(".to-check");
  const checked = check?.textContent ? { text: check.textContent, className: check.className } : null;
  const typing: Typing = { draft: form.dataset.draft ?? "", values: [], focus: null, checked };
  for (const field of form.querySelectorAll<Field>("[name]")) {
    const name = field.getAttribute("name")!;
    typing.values.push([name, field.value]);
    if (field === focused) {
      const text = field instanceof HTMLSelectElement ? null : field;
      typing.focus = { name, start: text?.selectionStart ?? null, end: text?.selectionEnd ?? null };
    }
  }
  return typing;
}

export function retype(view: Element, typing: Typing): void {
  const form = view.querySelector<HTMLFormElement>("form.write");
  if (!form) return;
  form.setAttribute("data-draft", typing.draft);
  const field = (name: string) => form.querySelector<Field>(`[name="${CSS.escape(name)}"]`);
  for (const [name, value] of typing.values) {
    const twin = field(name);
    if (twin) twin.value = value;
  }
  const check = form.querySelector(".to-check");
  if (check && typing.checked) {
    check.textContent = typing.checked.text;
    check.className = typing.checked.className;
  }
  const focus = typing.focus && field(typing.focus.name);
  if (!focus || !typing.focus) return;
  focus.focus();
  const { start, end } = typing.focus;
  if (start !== null && end !== null && !(focus instanceof HTMLSelectElement)) focus.setSelectionRange(start, end);
}
