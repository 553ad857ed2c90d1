// The page walker of browser_read_page (tree.rs): one Runtime.evaluate, in the tools' own
// isolated world (the page's scripts cannot see or change it), computes the nodes that
// Accessibility.getFullAXTree gives for tree::render, in the same shapes and order (roles and
// states named as Chromium's AX tree names them), without building Chromium's whole
// accessibility tree. It returns [rowsJson, element, ...]: a row is
// [parent, role, name, value, props, el], where el is null (no DOM node needed), a number
// (the backend DOM node id, learned on an earlier read), "n<i>" (the i-th element returned
// after the rows: its id comes back in the deep serialisation, and tree.rs hands the ids back
// through globalThis.__eddieLearn, under the read's number globalThis.__eddieRead that
// tree.rs sets before the walker, so that concurrent reads keep their elements apart), or
// "p<row>" (a select's popup: it stands for that row's element). Read only: it changes
// nothing the page can see.
(() => {
  const read = globalThis.__eddieRead
  const rows = []
  const els = []
  const known = (globalThis.__eddieKnown ||= new WeakMap())
  const pending = (globalThis.__eddiePending ||= new Map())
  globalThis.__eddieLearn ||= (n, ids) => {
    const mine = pending.get(n) || []
    ids.forEach((id, i) => { if (mine[i] && typeof id === 'number') known.set(mine[i], id) })
    pending.delete(n)
  }
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE'])
  const FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'cell', 'columnheader', 'rowheader', 'tab',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'DisclosureTriangle', 'checkbox', 'radio', 'switch',
    'tooltip', 'gridcell'])
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
    'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem',
    'textField', 'ListBoxOption', 'MenuListPopup', 'MenuListOption', 'PopUpButton', 'ToggleButton', 'DisclosureTriangle'])
  const NOT_REF = new Set(['RootWebArea', 'WebArea', 'generic', 'Iframe'])
  const NO_NAME = new Set(['generic', 'none', 'presentation', 'paragraph', 'emphasis', 'strong', 'LabelText',
    'listitem', 'list', 'StaticText'])
  const deepActive = () => {
    let a = document.activeElement
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement
    return document.hasFocus() ? a : null
  }
  const active = deepActive()
  // Every string of a row leaves the page through one sanitiser (push): a lone surrogate (text,
  // an attribute, a URL a script made) becomes U+FFFD (JSON.stringify would write it as a
  // lone `\ud800` escape, which serde_json refuses).
  const wf = (s) => (typeof s !== 'string' || s.isWellFormed() ? s : s.toWellFormed())
  const push = (parent, role, name, value, props, el) => {
    let at = null
    if (typeof el === 'string') at = el
    else if (el) at = known.get(el) ?? `n${els.push(el) - 1}`
    if (props) for (const k in props) props[k] = wf(props[k])
    rows.push([parent, wf(role), wf(name), wf(value), props, at])
    return rows.length - 1
  }
  const tri = (v) => (v === 'true' || v === 'false' || v === 'mixed' ? v : undefined)
  const collapse = (s) => s.replace(/[ \t\n\r\f]+/g, ' ').trim()
  const visible = (e) => e.checkVisibility({ visibilityProperty: true })
  const inputRole = (e) => {
    const t = e.type
    if (t === 'hidden') return ''
    if (t === 'checkbox') return 'checkbox'
    if (t === 'radio') return 'radio'
    if (t === 'range') return 'slider'
    if (t === 'number') return 'spinbutton'
    if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image') return 'button'
    if (t === 'search') return e.hasAttribute('list') ? 'combobox' : 'searchbox'
    if (['text', 'email', 'tel', 'url', 'password', ''].includes(t)) return e.hasAttribute('list') ? 'combobox' : 'textbox'
    return 'generic'
  }
  const implicit = (e) => {
    switch (e.tagName) {
      case 'A': case 'AREA': return e.hasAttribute('href') ? 'link' : 'generic'
      case 'BUTTON': return 'button'
      case 'INPUT': return inputRole(e)
      case 'SELECT': return e.multiple || e.size > 1 ? 'listbox' : 'combobox'
      case 'TEXTAREA': return 'textbox'
      case 'OPTION': return 'option'
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading'
      case 'UL': case 'OL': case 'MENU': return 'list'
      case 'LI': return 'listitem'
      case 'NAV': return 'navigation'
      case 'MAIN': return 'main'
      case 'ASIDE': return 'complementary'
      case 'ARTICLE': return 'article'
      case 'FORM': return 'form'
      case 'SECTION': return e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby') ? 'region' : 'generic'
      case 'HEADER': return e.closest('main,article,aside,nav,section') ? 'generic' : 'banner'
      case 'FOOTER': return e.closest('main,article,aside,nav,section') ? 'generic' : 'contentinfo'
      case 'P': return 'paragraph'
      case 'EM': return 'emphasis'
      case 'STRONG': return 'strong'
      case 'IMG': return e.getAttribute('alt') === '' ? 'none' : 'image'
      case 'TABLE': return 'table'
      case 'TR': return 'row'
      case 'TH': return e.closest('thead') || e.parentElement?.parentElement?.firstElementChild === e.parentElement ? 'columnheader' : 'rowheader'
      case 'TD': return 'cell'
      case 'DETAILS': case 'FIELDSET': case 'OPTGROUP': return 'group'
      case 'SUMMARY': return e.parentElement && e.parentElement.tagName === 'DETAILS' ? 'DisclosureTriangle' : 'generic'
      case 'LABEL': return 'LabelText'
      case 'DIALOG': return 'dialog'
      case 'HR': return 'separator'
      case 'PROGRESS': return 'progressbar'
      case 'METER': return 'meter'
      case 'FIGURE': return 'figure'
      case 'BLOCKQUOTE': return 'blockquote'
      case 'CODE': return 'code'
      case 'BR': return 'LineBreak'
      default: return 'generic'
    }
  }
  const roleOf = (e) => {
    const r = (e.getAttribute('role') || '').trim().split(/\s+/)[0]
    if (r) return r === 'img' ? 'image' : r
    return implicit(e)
  }
  // The text an element contributes to a name (rendered text, embedded controls left out).
  const textOf = (n, skip) => {
    if (n.nodeType === 3) return n.data
    if (n.nodeType !== 1 || n === skip || SKIP.has(n.tagName) || (n.tagName !== 'OPTION' && !visible(n))) return ''
    const al = n.getAttribute('aria-label')
    if (al && al.trim() && n !== skip) return ' ' + al + ' '
    if (n.tagName === 'IMG') return n.getAttribute('alt') || ''
    if (['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(n.tagName) && n !== skip && n.tagName !== 'BUTTON') return ''
    let s = ''
    for (const c of n.childNodes) s += textOf(c, skip)
    return s
  }
  const labelled = (e) => {
    const ids = (e.getAttribute('aria-labelledby') || '').trim()
    if (!ids) return ''
    return collapse(ids.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
      .map((x) => (x.getAttribute('aria-label') || '').trim() || textOf(x, null)).join(' '))
  }
  const nameOf = (e, role) => {
    if (role === 'generic' || role === 'none' || role === 'presentation') return ''
    const lb = labelled(e)
    if (lb) return lb
    const al = collapse(e.getAttribute('aria-label') || '')
    if (al) return al
    if (NO_NAME.has(role)) return ''
    const tag = e.tagName
    if (e.labels && e.labels.length && !(tag === 'INPUT' && ['button', 'submit', 'reset'].includes(e.type))) {
      const t = collapse([...e.labels].map((l) => textOf(l, e)).join(' '))
      if (t) return t
    }
    if (tag === 'IMG' || tag === 'AREA' || (tag === 'INPUT' && e.type === 'image')) {
      const alt = collapse(e.getAttribute('alt') || '')
      if (alt) return alt
    }
    if (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(e.type)) {
      return e.value || (e.type === 'submit' ? 'Submit' : e.type === 'reset' ? 'Reset' : '')
    }
    if (FROM_CONTENT.has(role) || (role === 'heading')) {
      const t = collapse(textOf(e, tag === 'LABEL' ? null : undefined))
      if (t) return t
    }
    const title = collapse(e.getAttribute('title') || '')
    if (title) return title
    const ph = collapse(e.getAttribute('placeholder') || '')
    if (ph && (role === 'textbox' || role === 'searchbox' || role === 'combobox')) return ph
    return ''
  }
  const listLevel = (e) => {
    let l = 0
    for (let p = e.parentElement; p; p = p.parentElement) if (p.tagName === 'UL' || p.tagName === 'OL' || p.tagName === 'MENU') l++
    return l
  }
  const props = (e, role) => {
    const p = {}
    const tag = e.tagName
    const disabled = e.matches(':disabled')
    if (!disabled && (e.tabIndex >= 0 || e.hasAttribute('tabindex') || e.isContentEditable)) p.focusable = true
    if (e === active) p.focused = true
    if (disabled || e.getAttribute('aria-disabled') === 'true') p.disabled = true
    if (tag === 'INPUT' && (e.type === 'checkbox' || e.type === 'radio')) p.checked = e.indeterminate ? 'mixed' : String(e.checked)
    else if (tri(e.getAttribute('aria-checked'))) p.checked = e.getAttribute('aria-checked')
    if (tri(e.getAttribute('aria-pressed'))) p.pressed = e.getAttribute('aria-pressed')
    if (tag === 'OPTION') p.selected = e.selected
    else if (e.hasAttribute('aria-selected')) p.selected = e.getAttribute('aria-selected') === 'true'
    if (tag === 'SELECT' && role === 'combobox') p.expanded = false
    else if (role === 'DisclosureTriangle') p.expanded = e.parentElement.open
    else if (e.hasAttribute('aria-expanded')) p.expanded = e.getAttribute('aria-expanded') === 'true'
    if (e.required || e.getAttribute('aria-required') === 'true') p.required = true
    const inv = e.getAttribute('aria-invalid')
    if (inv && inv !== 'false') p.invalid = inv
    if (e.readOnly === true || e.getAttribute('aria-readonly') === 'true') p.readonly = true
    if (role === 'heading') p.level = Number(e.getAttribute('aria-level')) || Number(tag[1]) || 2
    if (role === 'listitem') p.level = listLevel(e)
    if (tag === 'TEXTAREA' || e.getAttribute('aria-multiline') === 'true') p.multiline = true
    if ((role === 'dialog' || role === 'alertdialog') && (e.getAttribute('aria-modal') === 'true' || (tag === 'DIALOG' && e.matches(':modal')))) p.modal = true
    if (role === 'link' && e.href) p.url = e.href
    return p
  }
  const valueOf = (e, role) => {
    const tag = e.tagName
    if (tag === 'TEXTAREA') return e.value
    if (tag === 'INPUT') {
      if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'hidden'].includes(e.type)) return ''
      if (e.type === 'password') return '•'.repeat(e.value.length)
      return e.value
    }
    if (tag === 'SELECT' && role === 'combobox') return e.selectedOptions[0]?.text ?? ''
    return ''
  }
  const ordinal = (li) => {
    const list = li.parentElement
    let n = list && list.tagName === 'OL' ? list.start : 1
    for (let p = li.previousElementSibling; p; p = p.previousElementSibling) if (p.tagName === 'LI') n++
    return n
  }
  const MARKERS = { disc: '• ', circle: '◦ ', square: '▪ ' }
  const visit = (n, parent, shown) => {
    if (n.nodeType === 3) {
      if (shown && n.data.trim()) push(parent, 'StaticText', n.data, '', null)
      return
    }
    if (n.nodeType !== 1) return
    const e = n
    const tag = e.tagName
    if (SKIP.has(tag)) return
    const inSelect = (tag === 'OPTION' || tag === 'OPTGROUP') && e.closest('select')
    if (!inSelect && !e.checkVisibility()) return
    if (e.getAttribute('aria-hidden') === 'true' || e.inert) return
    const vis = inSelect || visible(e)
    // Chromium leaves out a label of a checkbox or radio (the control carries its text).
    const redundant = tag === 'LABEL' && e.control && e.control.tagName === 'INPUT' && (e.control.type === 'checkbox' || e.control.type === 'radio')
    let me = parent
    if (vis && !redundant) {
      const role = roleOf(e)
      if (role === 'LineBreak') return
      const p = props(e, role)
      // Only nodes that get a ref need their DOM node (tree.rs: Node::interactive).
      const keep = INTERACTIVE.has(role) || (p.focusable && !NOT_REF.has(role))
      me = push(parent, role, nameOf(e, role), valueOf(e, role), p, keep ? e : undefined)
      if (tag === 'SELECT' && role === 'combobox') me = push(me, 'MenuListPopup', '', '', {}, `p${me}`)
      if (tag === 'LI') {
        const st = getComputedStyle(e)
        if (st.display === 'list-item') {
          const t = st.listStyleType
          const marker = MARKERS[t] ?? (t === 'decimal' ? `${ordinal(e)}. ` : '')
          if (marker) push(me, 'ListMarker', marker, '', {})
        }
      }
      if (((tag === 'TEXTAREA' || tag === 'INPUT') && (role === 'textbox' || role === 'searchbox'))) {
        const v = valueOf(e, role)
        if (v) push(me, 'StaticText', v, '', {})
      }
    }
    if (tag === 'TEXTAREA') return
    const kids = e.shadowRoot ? e.shadowRoot.childNodes : e.childNodes
    for (const c of kids) {
      if (redundant && c.nodeType === 3) continue
      visit(c, me, vis)
    }
  }
  push(-1, 'RootWebArea', document.title, '', { focusable: true })
  if (document.body) visit(document.body, 0, true)
  // Kept for __eddieLearn only when there are new elements, and at most the 8 newest reads'
  // (a read whose learning never came, e.g. dropped mid-way, is let go, not kept for ever).
  if (els.length) {
    pending.set(read, els)
    while (pending.size > 8) pending.delete(pending.keys().next().value)
  }
  return [JSON.stringify(rows), ...els]
})()
