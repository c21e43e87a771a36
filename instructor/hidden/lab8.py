"""Hidden cases of lab 8 (instructors only: never copied to labs/, never in the student release). Lab 8 has no
function question: its construction (question 1) is checked on the lab's own field values."""

HIDDEN = {}
