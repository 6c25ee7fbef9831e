# SPDX-License-Identifier: MIT
"""The deployment tests find their helpers next to them."""
