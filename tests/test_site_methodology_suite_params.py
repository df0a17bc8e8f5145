"""The methodology page's suite table shows the params a device runs of its own, under the suite's row."""

from __future__ import annotations

from benchlib.site import methodology
from benchlib.workloads import all_workloads


def _row(table: str, start: str) -> str:
    return table.split(start, 1)[1].split("</tr>", 1)[0]


def test_each_device_size_is_a_row_of_what_differs_under_its_suites_row():
    table = methodology.suite_params_table()
    shown = 0
    for name, w in all_workloads().items():
        for device, sizes in w.device_sizes.items():
            for size in sizes:
                own = f"<td><code>{name}</code></td><td><code>{size}</code></td>"
                on = f"<td><code>{name}</code></td><td><code>{size}</code> on {methodology.DEVICE_NAMES[device]}</td>"
                assert own in table and on in table and table.index(own) < table.index(on)
                row = _row(table, on)
                assert row.startswith("<td>as above, except ")
                for key, value in methodology.params_list(w.device_params(size, device)):
                    assert f"<code>{key}</code> {value}" in row, (name, key)
                shown += 1
    assert shown >= 3  # attention, llm_decode and transformer_train on a CPU
    assert "<code>tokens</code> 2048" in _row(
        table, "<td><code>attention</code></td><td><code>standard</code> on a CPU"
    )
