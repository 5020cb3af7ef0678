"""The director's evidence: the tempo of calls and cards, claims checked, the evidence topic.
"""
