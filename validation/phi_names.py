"""First names the PHI gate takes a capitalised pair for a person's name by: common given names of the United
States (the Social Security Administration's most frequent names of the 1930s to the 2000s, as we remember
them), each a word a clinical label or a card does not use as a first word."""

from __future__ import annotations

FIRST_NAMES = frozenset(
    """
    Aaron Abigail Adam Adrian Adrienne Agnes Aidan Aiden Alan Albert Alberto Alec Alejandro Alex Alexa Alexander
    Alexandra Alexis Alfred Alfredo Alice Alicia Alison Allen Allison Alma Alvin Alyssa Amanda Amber Amelia Amy
    Ana Andre Andrea Andres Andrew Angel Angela Angelica Angelina Angie Anita Ann Anna Anne Annette Annie Anthony
    Antonio April Arlene Armando Arnold Arthur Ashley Audrey Austin Ava Barbara Barry Beatrice Becky Belinda Ben
    Benjamin Bernadette Bernard Bernice Bert Beth Bethany Betty Beverly Bill Billy Blake Bob Bobby Bonnie Brad
    Bradley Brandi Brandon Brenda Brent Brett Brian Bridget Brittany Brooke Bruce Bryan Caleb Calvin Cameron
    Camila Carl Carla Carlos Carmen Carol Caroline Carolyn Carrie Casey Cassandra Catherine Cathy Cecil Cecilia
    Chad Charlene Charles Charlie Charlotte Chelsea Cheryl Chester Chloe Chris Christian Christina Christine
    Christopher Cindy Claire Clara Clarence Claude Claudia Clifford Clinton Clyde Cody Colleen Connie Connor
    Constance Corey Courtney Craig Crystal Curtis Cynthia Daisy Dale Dan Dana Daniel Danielle Danny Darlene
    Darrell Darren Dave David Dawn Dean Deanna Debbie Deborah Debra Delores Denise Dennis Derek Derrick Diana
    Diane Dianne Dolores Dominic Don Donald Donna Dora Doris Dorothy Douglas Duane Dustin Dwayne Dwight Dylan Earl
    Eddie Edgar Edith Edna Eduardo Edward Edwin Eileen Elaine Eleanor Elena Eli Elijah Elizabeth Ella Ellen Elsie
    Emily Emma Emmanuel Enrique Eric Erica Erik Erin Ernest Esther Ethan Ethel Eugene Eva Evan Evelyn Faith
    Felicia Felix Fernando Florence Frances Francis Francisco Frank Franklin Fred Freddie Frederick Gabriel
    Gabriela Gabriella Gail Gary Gavin Gene Geneva Geoffrey George Georgia Gerald Geraldine Gertrude Gilbert
    Gina Gladys Glen Glenda Glenn Gloria Gordon Grace Greg Gregory Gwendolyn Hailey Haley Hannah Harold Harry
    Harvey Hazel Heather Hector Heidi Helen Henry Herbert Herman Hilda Holly Howard Hunter Ian Ida Irene Iris
    Isaac Isabel Isabella Isaiah Ivan Jack Jackie Jackson Jacob Jacqueline Jaime Jake James Jamie Jan Jane Janet
    Janice Jared Jasmine Jason Javier Jay Jean Jeanette Jeanne Jeff Jeffery Jeffrey Jenna Jennifer Jenny Jeremiah
    Jeremy Jerome Jerry Jesse Jessica Jessie Jesus Jill Jim Jimmy Jo Joan Joann Joanne Joe Joel Johanna John
    Johnny Jon Jonathan Jordan Jorge Jose Joseph Josephine Joshua Joy Joyce Juan Juanita Judith Judy Julia Julian
    Julie Julio June Justin Kaitlyn Karen Karl Kate Katherine Kathleen Kathryn Kathy Katie Katrina Kay Kayla
    Keith Kelly Kelsey Ken Kenneth Kerry Kevin Kim Kimberly Kirk Kristen Kristin Kristina Kurt Kyle Lance Larry
    Laura Lauren Laurie Lawrence Leah Lee Leon Leonard Leroy Leslie Lester Levi Lewis Lillian Lily Linda Lindsay
    Lindsey Lisa Lloyd Logan Lois Lonnie Lorraine Louis Louise Lucas Lucille Lucy Luis Luke Lydia Lynn Madeline
    Madison Maggie Manuel Marcia Marcus Margaret Maria Marian Marie Marilyn Mario Marion Marjorie Mark Marlene
    Marsha Martha Martin Marvin Mary Mason Matthew Maureen Maurice Max Maxine Megan Melanie Melinda Melissa
    Melvin Mia Michael Micheal Michele Michelle Miguel Mike Mildred Milton Minnie Miranda Misty Mitchell Molly
    Monica Morgan Muriel Myrtle Nancy Naomi Natalie Nathan Nathaniel Neil Nelson Nicholas Nicole Nina Noah Noel
    Nora Norma Norman Olga Olivia Oscar Owen Paige Pamela Patricia Patrick Patsy Paul Paula Pauline Pearl Pedro
    Peggy Penny Peter Philip Phillip Phyllis Priscilla Rachel Rafael Ralph Ramon Randall Randy Raul Ray Raymond
    Rebecca Regina Reginald Renee Rhonda Ricardo Richard Rick Ricky Riley Rita Robert Roberta Roberto Robin
    Rodney Roger Roland Ron Ronald Ronnie Rosa Rose Rosemary Ross Roxanne Roy Ruben Ruby Russell Ruth Ryan
    Sabrina Sadie Sally Salvador Sam Samantha Samuel Sandra Sara Sarah Savannah Scott Sean Sergio Seth Shane
    Shannon Sharon Shawn Sheila Shelby Shelley Sherri Sherry Shirley Sidney Sofia Sonia Sophia Stacey Stacy
    Stanley Stella Stephanie Stephen Steve Steven Sue Susan Suzanne Sydney Sylvia Tamara Tammy Tanya Tara Ted
    Teresa Terrance Terry Thelma Theodore Theresa Thomas Tiffany Tim Timothy Tina Todd Tom Tommy Toni Tony Tracey
    Traci Tracy Travis Trevor Troy Tyler Valerie Vanessa Vernon Veronica Vicki Vickie Victor Victoria Vincent
    Viola Violet Virgil Virginia Vivian Wade Walter Wanda Warren Wayne Wendy Wesley Willard William Willie Wilma
    Yolanda Yvonne Zachary Zoe
    """.split()
)
