"""Build-time blocks for the site's pages, called from markdown-exec blocks.

```python exec="true" html="true"
from benchlib.site import chart; print(chart("matmul"))
```
"""

from __future__ import annotations

from benchlib.site.figures import ChartsOnPage, chart

__all__ = ["ChartsOnPage", "chart"]
