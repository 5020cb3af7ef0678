"""What the table itself shows: the indicator policy and the display text in each language.
"""
