// The login page: the page asked for before the login (/console#table/1) reaches here as
// this page's fragment, which a browser never sends to the server. The form carries it in
// a field, so that the login lands on that page, not on the room; the language links keep it.
"use strict";
(() => {
  const hash = location.hash;
  if (hash.length < 2) return;
  const field = document.getElementById("login-fragment");
  if (field) field.value = hash;
  const form = field && field.form;
  // a wrong password shows this page again with the fragment still in its address
  if (form) form.action = "/login" + hash;
  for (const link of document.querySelectorAll(".langs a")) {
    link.href = link.getAttribute("href").split("#")[0] + hash;
  }
})();
