// Draws the staff "Upcoming" charts from the JSON the page embeds (json_script).
// The table under the charts carries the same numbers for screen readers.
document.addEventListener("DOMContentLoaded", () => {
  const source = document.getElementById("upcoming-data");
  if (!source || typeof Chart === "undefined") return;
  const data = JSON.parse(source.textContent);
  // The words come with the data, in the page's language (billing/staff/batch_pages.py).
  const text = data.text || { payments: "Payments due", reminders: "Reminders due", total: "Total %(currency)s" };
  new Chart(document.getElementById("upcoming-counts"), {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: [
        { label: text.payments, data: data.payments, backgroundColor: "#417690" },
        { label: text.reminders, data: data.reminders, type: "line", borderColor: "#e69f00", backgroundColor: "#e69f00" },
      ],
    },
    options: { maintainAspectRatio: false, animation: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
  const amounts = document.getElementById("upcoming-amounts");
  if (!amounts) return;
  const palette = ["#2a9d8f", "#264653", "#e76f51", "#8ab17d", "#9b5de5"];
  new Chart(amounts, {
    type: "bar",
    data: {
      labels: data.labels,
      // Minor units scaled for display only; every sum was made in integers on the server.
      datasets: Object.entries(data.amounts).map(([currency, series], i) => ({
        label: text.total.replace("%(currency)s", currency),
        data: series.values.map((v) => v / 10 ** series.exponent),
        backgroundColor: palette[i % palette.length],
      })),
    },
    options: { maintainAspectRatio: false, animation: false, scales: { y: { beginAtZero: true } } },
  });
});
