"""What every rule's verdict shares: what a verdict may say given its statistics
(:mod:`normbench.judge.verdicts.qualify`), which seeds it counts and the fields a judged claim opens with
(:mod:`normbench.judge.verdicts.counting`), and the judged claim in words (:mod:`normbench.judge.verdicts.describe`)."""
