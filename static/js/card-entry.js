// Card entry with Stripe.js Elements (templates/_card_entry.html). The card is typed into
// Stripe's own field and saved by confirming the page's SetupIntent with Stripe; the form
// then posts only the SetupIntent's id (input "setup_intent"): the card number never
// reaches rpay's server. Loaded after Stripe.js, so `Stripe` is defined.
(function () {
  "use strict";
  var mount = document.getElementById("card-entry");
  if (!mount || typeof Stripe === "undefined") { return; }
  var form = mount.closest("form");
  var saved = form.querySelector("input[name=setup_intent]");
  var errorBox = document.getElementById("card-entry-error");
  var stripe = Stripe(mount.dataset.publishableKey);
  var card = stripe.elements().create("card", { hidePostalCode: true });
  var typed = false;
  card.mount(mount);
  card.on("change", function (event) {
    // Stripe's Elements say whether the field is empty; a stand-in that says nothing was typed in.
    typed = event ? !event.empty : true;
    errorBox.textContent = event && event.error ? event.error.message : "";
  });

  // The subscribe page's "Pay with" choice: a wallet card needs no new card.
  function walletCardChosen() {
    var chosen = form.querySelector("input[name=saved_card]:checked");
    return chosen !== null && chosen.value !== "new";
  }

  function value(name) {
    var field = form.querySelector("[name=" + name + "]");
    return field ? field.value.trim() : "";
  }

  form.addEventListener("submit", function (event) {
    if (saved.value || walletCardChosen() || (mount.dataset.optional && !typed)) {
      return; // nothing to save in the browser: the server has what it needs
    }
    event.preventDefault();
    var buttons = form.querySelectorAll("button[type=submit]");
    buttons.forEach(function (b) { b.disabled = true; });
    var details = {};
    if (value("cardholder")) { details.name = value("cardholder"); }
    stripe.confirmCardSetup(mount.dataset.clientSecret, {
      payment_method: { card: card, billing_details: details }
    }).then(function (result) {
      if (result.error) {
        errorBox.textContent = result.error.message || String(result.error);
        buttons.forEach(function (b) { b.disabled = false; });
        return;
      }
      saved.value = result.setupIntent.id;
      form.submit();
    });
  });
}());
